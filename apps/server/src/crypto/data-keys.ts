import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM under a data key (a project's, say), with associated data naming the row and column a
 * ciphertext belongs to: moved to another row or column, it no longer decrypts. Stored form:
 * "d1:" + base64(iv | tag | ciphertext). The data keys themselves are stored wrapped by the root key.
 */
export const DATA_KEY_BYTES = 32;
const PREFIX = "d1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export const generateDataKey = () => randomBytes(DATA_KEY_BYTES);

export const sealWithDataKey = (key: Buffer, plaintext: string, associatedData: string): string => {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(associatedData, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
};

/** Throws when the ciphertext was altered, belongs to another row or column, or was sealed under another key. */
export const openWithDataKey = (key: Buffer, stored: string, associatedData: string): string => {
  if (!stored.startsWith(PREFIX)) throw new Error("unknown data-key ciphertext version");
  const raw = Buffer.from(stored.slice(PREFIX.length), "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(associatedData, "utf8"));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const plaintext = decipher.update(raw.subarray(IV_BYTES + TAG_BYTES));
  // GCM yields no bytes at the end; `final` only checks the tag (and throws when it does not match).
  decipher.final();
  return plaintext.toString("utf8");
};

/** An unwrapped data key with the two operations bound to it. */
export type DataKey = {
  /** The key row's id: cache entries and ciphertexts belong to one key row. */
  id: string;
  seal: (plaintext: string, associatedData: string) => string;
  open: (stored: string, associatedData: string) => string;
};

export const dataKeyOf = (id: string, key: Buffer): DataKey => ({
  id,
  seal: (plaintext, associatedData) => sealWithDataKey(key, plaintext, associatedData),
  open: (stored, associatedData) => openWithDataKey(key, stored, associatedData),
});
