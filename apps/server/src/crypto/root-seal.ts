import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

/**
 * What seals the root keys: the software seal (a key-encryption key derived from ENCRYPTION_KEY) or
 * an HSM key reached through PKCS#11. A seal only ever sees root-key material (32 bytes per version),
 * never a data key or a secret: it is needed at start, when a rotation creates a version, when an
 * instance meets a version created after it started, and when the seal changes.
 */
export type SealKind = "SOFTWARE" | "HSM";

export type RootSeal = {
  kind: SealKind;
  /** Names the sealing key without revealing it (a hash of a fixed encryption under it). */
  fingerprint: string;
  /** Seals root-key material; the associated data (`root-key:<version>`) binds it to its row. */
  seal: (material: Buffer, associatedData: string) => Promise<string>;
  /** Opens what `seal` sealed; throws `SealMismatch` when the key is not the one that sealed it. */
  unseal: (sealed: string, associatedData: string) => Promise<Buffer>;
  /** Random bytes from the seal's source (the HSM's generator), or undefined when it has none of its own. */
  random: (bytes: number) => Promise<Buffer | undefined>;
  /** Releases what the seal holds open (the PKCS#11 session); idempotent. */
  close: () => Promise<void>;
};

/** The sealed text did not open under this seal's key (another key, or altered). */
export class SealMismatch extends Error {
  override name = "SealMismatch";
}

/**
 * The seal could not be used right now (the HSM's device or session failed, a timeout): what needs
 * it answers 503 and is tried again later; nothing is lost.
 */
export class SealUnavailable extends Error {
  override name = "SealUnavailable";
}

/**
 * A misconfigured seal found at start (library, token, PIN, label, mechanism): the message is the
 * one line the process prints before it exits, and never holds the PIN.
 */
export class SealConfigError extends Error {
  override name = "SealConfigError";
}

const SOFT_PREFIX = "s1:";
const FINGERPRINT_LABEL = "keyward:root-seal-fingerprint";

/** The fingerprint of a 32-byte key: a short hash of an HMAC-like derivation, never the key. */
export const fingerprintOf = (probe: Buffer) => createHash("sha256").update(probe).digest("hex").slice(0, 16);

/**
 * The software seal: AES-256-GCM under HKDF-SHA256(ENCRYPTION_KEY, "keyward:root-seal"). The
 * key-encryption key is never itself a root key. Stored form: "s1:" + base64(iv | tag | ciphertext).
 */
export const softwareSeal = (encryptionKey: Buffer): RootSeal => {
  if (encryptionKey.length !== 32) throw new SealConfigError("ENCRYPTION_KEY must be 32 bytes of base64");
  const kek = Buffer.from(hkdfSync("sha256", encryptionKey, Buffer.alloc(0), "keyward:root-seal", 32));
  const probe = Buffer.from(hkdfSync("sha256", kek, Buffer.alloc(0), FINGERPRINT_LABEL, 32));
  return {
    kind: "SOFTWARE",
    fingerprint: fingerprintOf(probe),
    seal: (material, associatedData) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", kek, iv);
      cipher.setAAD(Buffer.from(associatedData));
      const body = Buffer.concat([cipher.update(material), cipher.final()]);
      return Promise.resolve(SOFT_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64"));
    },
    unseal: (sealed, associatedData) => {
      if (!sealed.startsWith(SOFT_PREFIX)) return Promise.reject(new SealMismatch("not sealed by ENCRYPTION_KEY"));
      const raw = Buffer.from(sealed.slice(SOFT_PREFIX.length), "base64");
      try {
        const decipher = createDecipheriv("aes-256-gcm", kek, raw.subarray(0, 12));
        decipher.setAAD(Buffer.from(associatedData));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Promise.resolve(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]));
      } catch {
        return Promise.reject(new SealMismatch("ENCRYPTION_KEY does not open this root key"));
      }
    },
    random: () => Promise.resolve(undefined),
    close: () => Promise.resolve(),
  };
};
