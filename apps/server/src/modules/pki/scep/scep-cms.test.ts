import { constants, generateKeyPairSync, publicEncrypt, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { recoverContentKey } from "./scep-cms";

describe("recoverContentKey (PKCS#1 v1.5 type 2, no padding oracle)", () => {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const size = 256;
  /** A raw block as the client would have padded it, encrypted without further padding. */
  const raw = (block: Buffer) => publicEncrypt({ key: publicKey, padding: constants.RSA_NO_PADDING }, block);
  const padded = (key: Buffer, paddingBytes: number, head = [0x00, 0x02]) => {
    const block = Buffer.alloc(size);
    block.set(head, 0);
    const start = size - key.length - 1 - paddingBytes;
    for (let i = start; i < size - key.length - 1; i++) block[i] = 1 + (i % 200);
    block[size - key.length - 1] = 0;
    key.copy(block, size - key.length);
    // Bytes between the head and the padding (when the padding is short) stay non-zero too.
    for (let i = 2; i < start; i++) block[i] = 7;
    return block;
  };

  it("recovers a well-padded key, from a client's PKCS#1 v1.5 encryption", () => {
    const key = randomBytes(32);
    expect(
      recoverContentKey(privateKey, publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, key), 32),
    ).toEqual(key);
    expect(recoverContentKey(privateKey, raw(padded(key, size - 32 - 3)), 32)).toEqual(key);
  });

  it("answers a bad block with a stable substitute of the right length, never the embedded bytes", () => {
    const key = randomBytes(32);
    const badBlocks = {
      "wrong block type": padded(key, size - 32 - 3, [0x00, 0x01]),
      "non-zero first byte": padded(key, size - 32 - 3, [0x01, 0x02]),
      "no separator": Buffer.concat([Buffer.from([0x00, 0x02]), Buffer.alloc(size - 2, 9)]),
      "key of another length": padded(randomBytes(16), size - 16 - 3),
    };
    const shortPadding = Buffer.alloc(size, 5);
    shortPadding.set([0x00, 0x02], 0);
    shortPadding[6] = 0; // four padding bytes, then the separator
    for (const [name, block] of Object.entries({ ...badBlocks, "padding under eight bytes": shortPadding })) {
      const ciphertext = raw(block);
      const recovered = recoverContentKey(privateKey, ciphertext, 32);
      expect(recovered, name).toHaveLength(32);
      expect(recovered.equals(block.subarray(size - 32)), name).toBe(false);
      expect(recoverContentKey(privateKey, ciphertext, 32), name).toEqual(recovered);
    }
  });
});
