import { randomBytes, randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decryptWithKey, encryptWithKey } from "./kms-ciphertext";

const keyId = randomUUID();
const key = randomBytes(32);

describe("KMS ciphertext format", () => {
  it("round-trips any payload, and any changed byte, truncation or other key id makes it undecryptable", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 4096 }),
        fc.integer({ min: 1, max: 0x7fffffff }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (plaintext, version, position, flip) => {
          const blob = encryptWithKey(key, keyId, version, Buffer.from(plaintext));
          expect(decryptWithKey(key, keyId, blob)?.equals(Buffer.from(plaintext))).toBe(true);
          const altered = Buffer.from(blob);
          altered[position % altered.length]! ^= flip;
          expect(decryptWithKey(key, keyId, altered)).toBeUndefined();
          expect(decryptWithKey(key, keyId, blob.subarray(0, position % blob.length))).toBeUndefined();
          expect(decryptWithKey(key, randomUUID(), blob)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
