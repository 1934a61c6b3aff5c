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

const sealBytes = (key: Buffer, plaintext: Buffer, associatedData: string): string => {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(associatedData, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
};

/** Throws when the ciphertext was altered, belongs to another row or column, or was sealed under another key. */
const openBytes = (key: Buffer, stored: string, associatedData: string): Buffer => {
  if (!stored.startsWith(PREFIX)) throw new Error("unknown data-key ciphertext version");
  const raw = Buffer.from(stored.slice(PREFIX.length), "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(associatedData, "utf8"));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const plaintext = decipher.update(raw.subarray(IV_BYTES + TAG_BYTES));
  // GCM yields no bytes at the end; `final` only checks the tag (and throws when it does not match).
  decipher.final();
  return plaintext;
};

export const sealWithDataKey = (key: Buffer, plaintext: string, associatedData: string): string =>
  sealBytes(key, Buffer.from(plaintext, "utf8"), associatedData);

export const openWithDataKey = (key: Buffer, stored: string, associatedData: string): string =>
  openBytes(key, stored, associatedData).toString("utf8");

const LENGTH_BYTES = 4;

/**
 * Several strings under one ciphertext, for fields always read together (a secret's value and
 * comment): one open instead of one per field, and ~30 bytes of IV and tag less per field. The
 * plaintext is each part's UTF-8 length (4 bytes, big-endian) followed by its bytes.
 */
export const sealPartsWithDataKey = (key: Buffer, parts: readonly string[], associatedData: string): string => {
  const encoded = parts.map((part) => Buffer.from(part, "utf8"));
  const plaintext = Buffer.allocUnsafe(encoded.reduce((sum, b) => sum + LENGTH_BYTES + b.length, 0));
  let at = 0;
  for (const bytes of encoded) {
    at = plaintext.writeUInt32BE(bytes.length, at);
    at += bytes.copy(plaintext, at);
  }
  return sealBytes(key, plaintext, associatedData);
};

/** The parts sealed by `sealPartsWithDataKey`; throws as `openWithDataKey` does, or when the count differs. */
export const openPartsWithDataKey = (key: Buffer, stored: string, associatedData: string, count: number) => {
  const plaintext = openBytes(key, stored, associatedData);
  const parts: string[] = [];
  let at = 0;
  while (at + LENGTH_BYTES <= plaintext.length) {
    const end = at + LENGTH_BYTES + plaintext.readUInt32BE(at);
    if (end > plaintext.length) break;
    parts.push(plaintext.toString("utf8", at + LENGTH_BYTES, end));
    at = end;
  }
  // Only a bug (or a different count asked for) gets here: the tag vouches for the bytes themselves.
  if (at !== plaintext.length || parts.length !== count) throw new Error("malformed sealed parts");
  return parts;
};

/** An unwrapped data key with the two operations bound to it. */
export type DataKey = {
  /** The key row's id: cache entries and ciphertexts belong to one key row. */
  id: string;
  seal: (plaintext: string, associatedData: string) => string;
  open: (stored: string, associatedData: string) => string;
  sealParts: (parts: readonly string[], associatedData: string) => string;
  openParts: (stored: string, associatedData: string, count: number) => string[];
};

export const dataKeyOf = (id: string, key: Buffer): DataKey => ({
  id,
  seal: (plaintext, associatedData) => sealWithDataKey(key, plaintext, associatedData),
  open: (stored, associatedData) => openWithDataKey(key, stored, associatedData),
  sealParts: (parts, associatedData) => sealPartsWithDataKey(key, parts, associatedData),
  openParts: (stored, associatedData, count) => openPartsWithDataKey(key, stored, associatedData, count),
});
