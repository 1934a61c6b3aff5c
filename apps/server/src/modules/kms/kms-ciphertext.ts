import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Ciphertext format (opaque to clients, base64 on the wire):
 *
 *   [1 byte format = 0x01][4 bytes key version, big-endian][12 bytes IV][16 bytes GCM tag][ciphertext]
 *
 * AES-GCM (128 or 256 by the key's algorithm) with associated data `keyward-kms:<keyId>:<version>`,
 * so a ciphertext made by another key, or with its version byte changed, fails authentication. The
 * version says which key version to open it with: after a rotation old ciphertexts keep decrypting.
 */
const FORMAT = 0x01;
const HEADER_BYTES = 5;
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const CIPHERTEXT_OVERHEAD = HEADER_BYTES + IV_BYTES + TAG_BYTES;

const cipherName = (key: Buffer) => (key.length === 16 ? "aes-128-gcm" : "aes-256-gcm");
const aad = (keyId: string, version: number) => Buffer.from(`keyward-kms:${keyId}:${version}`, "utf8");

export const encryptWithKey = (key: Buffer, keyId: string, version: number, plaintext: Buffer): Buffer => {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = FORMAT;
  header.writeUInt32BE(version, 1);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(cipherName(key), key, iv);
  cipher.setAAD(aad(keyId, version));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, iv, cipher.getAuthTag(), body]);
};

/** The key version a ciphertext names, or undefined when it is not one of ours. */
export const ciphertextVersion = (blob: Buffer): number | undefined => {
  if (blob.length < CIPHERTEXT_OVERHEAD || blob[0] !== FORMAT) return undefined;
  const version = blob.readUInt32BE(1);
  // Versions are PostgreSQL ints: a larger one is not ours (and must not reach a query).
  return version >= 1 && version <= 0x7fffffff ? version : undefined;
};

/** Undefined when the ciphertext was altered or belongs to another key or version. */
export const decryptWithKey = (key: Buffer, keyId: string, blob: Buffer): Buffer | undefined => {
  const version = ciphertextVersion(blob);
  if (version === undefined) return undefined;
  try {
    const decipher = createDecipheriv(cipherName(key), key, blob.subarray(HEADER_BYTES, HEADER_BYTES + IV_BYTES));
    decipher.setAAD(aad(keyId, version));
    decipher.setAuthTag(blob.subarray(HEADER_BYTES + IV_BYTES, CIPHERTEXT_OVERHEAD));
    return Buffer.concat([decipher.update(blob.subarray(CIPHERTEXT_OVERHEAD)), decipher.final()]);
  } catch {
    return undefined;
  }
};
