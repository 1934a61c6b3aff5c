import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { singleKeyring } from "./root-keyring";

/**
 * What seals values straight under the root key (AES-256-GCM; see root-keyring.ts for the stored
 * forms). The optional `context` is bound as additional data, so a ciphertext moved to another row fails.
 */
export type SecretBox = {
  encrypt: (plaintext: string, context?: string) => string;
  decrypt: (stored: string, context?: string) => string;
  /** A 32-byte key for one purpose (HKDF-SHA256 of the instance's derivation secret): a root key never signs. */
  deriveKey: (purpose: string) => Buffer;
};

/** One key as root key version 1, deriving from it too: for tools and tests that hold only a key. */
export const createSecretBox = (key: Buffer): SecretBox => {
  if (key.length !== 32) throw new Error("root key must be 32 bytes");
  return singleKeyring(key);
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
