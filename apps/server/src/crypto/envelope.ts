import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { join } from "node:path";

/**
 * AES-256-GCM under the root key for secrets at rest. Stored form: "v1:" + base64(iv | tag | ciphertext).
 * The optional `context` is bound as additional data, so a ciphertext moved to another row fails.
 */
export type SecretBox = {
  encrypt: (plaintext: string, context?: string) => string;
  decrypt: (stored: string, context?: string) => string;
  /** A 32-byte key for one purpose (HKDF-SHA256 of the root key): the root key itself never signs. */
  deriveKey: (purpose: string) => Buffer;
};

export const createSecretBox = (key: Buffer): SecretBox => {
  if (key.length !== 32) throw new Error("root key must be 32 bytes");
  return {
    encrypt(plaintext, context = "") {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
    },
    decrypt(stored, context = "") {
      if (!stored.startsWith("v1:")) throw new Error("unknown ciphertext version");
      const raw = Buffer.from(stored.slice(3), "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    },
    deriveKey: (purpose) => Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `keyward:${purpose}`, 32)),
  };
};

/** The configured key, or the one in the data directory's `root.key`; undefined when neither exists (nothing is generated). */
export const readRootKey = (configured: string | undefined, dataDir: string): Buffer | undefined => {
  if (configured) return Buffer.from(configured, "base64");
  const file = join(dataDir, "root.key");
  if (!existsSync(file)) return undefined;
  const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
};

/** The configured key, or one generated once into the data directory with mode 0600. */
export const loadRootKey = (configured: string | undefined, dataDir: string): Buffer => {
  if (configured) return Buffer.from(configured, "base64");
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "root.key");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
};
