import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { SecretBox } from "./envelope";

/**
 * The root keys of this process, by version: AES-256-GCM for values sealed straight under the root
 * (data keys, credentials, CA keys), the active version for every new seal, older versions kept
 * only to open what is not yet re-wrapped. Stored forms: "v2:<version>:" + base64(iv | tag |
 * ciphertext), and the older "v1:" + base64(…), which is version 1. The optional `context` is bound
 * as associated data, so a ciphertext moved to another row fails.
 *
 * `deriveKey` does not use a root key: purpose keys (the people's token signing key, …) come from the
 * instance's derivation secret, so rotating the root key signs nobody out.
 */
export type RootKeyring = SecretBox & {
  readonly activeVersion: number;
  /** The versions held, oldest first. */
  versions: () => number[];
  has: (version: number) => boolean;
  /** The version a stored value is sealed under, or undefined when it is not in a root-sealed form. */
  versionOf: (stored: string) => number | undefined;
  /** Holds an unsealed version (its material is copied). */
  hold: (version: number, material: Buffer) => void;
  /** New seals use this version from now on; it must be held. */
  activate: (version: number) => void;
  /** Forgets a retired version: its material is overwritten. */
  forget: (version: number) => void;
  /** Sets the secret `deriveKey` derives from (once, at start). */
  setDerivationSecret: (secret: Buffer) => void;
  /** A stored value re-sealed under `version` (held), opened with the version it names. */
  reseal: (stored: string, context: string, version: number) => string;
  /**
   * The keyring as plain data (material included), for a cluster primary to hand to a worker it forks
   * over their private IPC channel, so a worker started while the database is down can serve (503)
   * and then read at once; never written anywhere.
   */
  snapshot: () => KeyringSnapshot;
  /** Called (once per version until it is held) when a value names a version this process lacks. */
  onMissing: (listener: (version: number) => void) => void;
};

export type KeyringSnapshot = { active: number; versions: [number, string][]; derivation: string };

/** A keyring rebuilt from a snapshot. */
export const keyringFromSnapshot = (snapshot: KeyringSnapshot): RootKeyring => {
  const keyring = createRootKeyring();
  for (const [version, material] of snapshot.versions) keyring.hold(version, Buffer.from(material, "base64"));
  keyring.activate(snapshot.active);
  keyring.setDerivationSecret(Buffer.from(snapshot.derivation, "base64"));
  return keyring;
};

/** A value names a root-key version this process does not hold (yet): a 503 the client retries. */
export class RootKeyUnavailable extends Error {
  override name = "RootKeyUnavailable";
  constructor(readonly version: number) {
    super(`root key version ${version} is not loaded on this instance yet`);
  }
}

const IV = 12;
const TAG = 16;
const V2 = /^v2:(\d{1,9}):/;

const seal = (key: Buffer, plaintext: string, context: string) => {
  const iv = randomBytes(IV);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
};

const open = (key: Buffer, payload: string, context: string) => {
  const raw = Buffer.from(payload, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(raw.subarray(IV, IV + TAG));
  return Buffer.concat([decipher.update(raw.subarray(IV + TAG)), decipher.final()]).toString("utf8");
};

/** The version and payload of a stored root-sealed value; throws on any other form. */
const parse = (stored: string): { version: number; payload: string } => {
  if (stored.startsWith("v1:")) return { version: 1, payload: stored.slice(3) };
  const match = V2.exec(stored);
  if (!match) throw new Error("unknown ciphertext version");
  return { version: Number(match[1]), payload: stored.slice(match[0].length) };
};

export const createRootKeyring = (): RootKeyring => {
  let derivationSecret: Buffer | undefined;
  const keys = new Map<number, Buffer>();
  const missingListeners: ((version: number) => void)[] = [];
  const reported = new Set<number>();
  let active = 0;
  const keyOf = (version: number) => {
    const key = keys.get(version);
    if (key) return key;
    if (!reported.has(version)) {
      reported.add(version);
      for (const listener of missingListeners) listener(version);
    }
    throw new RootKeyUnavailable(version);
  };
  return {
    get activeVersion() {
      return active;
    },
    versions: () => [...keys.keys()].sort((a, b) => a - b),
    has: (version) => keys.has(version),
    versionOf: (stored) => {
      if (stored.startsWith("v1:")) return 1;
      const match = V2.exec(stored);
      return match ? Number(match[1]) : undefined;
    },
    hold: (version, material) => {
      if (material.length !== 32) throw new Error(`root key version ${version} is not 32 bytes`);
      keys.set(version, Buffer.from(material));
      reported.delete(version);
    },
    activate: (version) => {
      if (!keys.has(version)) throw new Error(`root key version ${version} is not held`);
      active = version;
    },
    forget: (version) => {
      if (version === active) throw new Error("the active root key cannot be forgotten");
      keys.get(version)?.fill(0);
      keys.delete(version);
    },
    setDerivationSecret: (secret) => {
      if (secret.length !== 32) throw new Error("the derivation secret must be 32 bytes");
      derivationSecret = Buffer.from(secret);
    },
    snapshot: () => {
      if (!derivationSecret) throw new Error("the keyring has no derivation secret yet");
      return {
        active,
        versions: [...keys].map(([version, key]) => [version, key.toString("base64")] as [number, string]),
        derivation: derivationSecret.toString("base64"),
      };
    },
    onMissing: (listener) => void missingListeners.push(listener),
    reseal: (stored, context, version) => {
      const { version: from, payload } = parse(stored);
      return `v2:${version}:${seal(keyOf(version), open(keyOf(from), payload, context), context)}`;
    },
    encrypt: (plaintext, context = "") => `v2:${active}:${seal(keyOf(active), plaintext, context)}`,
    decrypt: (stored, context = "") => {
      const { version, payload } = parse(stored);
      return open(keyOf(version), payload, context);
    },
    deriveKey: (purpose) => {
      if (!derivationSecret) throw new Error("the keyring has no derivation secret yet");
      return Buffer.from(hkdfSync("sha256", derivationSecret, Buffer.alloc(0), `keyward:${purpose}`, 32));
    },
  };
};

/** A keyring holding one key as version 1 that also derives from it: tools and tests that have only a key. */
export const singleKeyring = (key: Buffer): RootKeyring => {
  const keyring = createRootKeyring();
  keyring.setDerivationSecret(key);
  keyring.hold(1, key);
  keyring.activate(1);
  return keyring;
};
