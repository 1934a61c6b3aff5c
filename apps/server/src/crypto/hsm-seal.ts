import { fingerprintOf, SealConfigError, SealMismatch, SealUnavailable, type RootSeal } from "./root-seal";
import {
  ckrOf,
  closeSessionQuietly,
  gcmDecrypt,
  gcmEncrypt,
  initialise,
  isTagFailure,
  IV_BYTES,
  OpenFailure,
  openSession,
  PIN_REFUSALS,
  startLibrary,
  stopLibrary,
  TAG_BYTES,
  type Handle,
  type Pkcs11Library,
  type Pkcs11Module,
} from "./hsm-session";

export type HsmSealConfig = {
  libPath: string;
  pin: string;
  /** Position in the library's list of all slots (`C_GetSlotList(false)`), not a slot id. */
  slot: number;
  keyLabel: string;
  generateKey: boolean;
  /** How long one operation on the device may take before the seal answers `SealUnavailable` (10 s). */
  timeoutMs?: number;
  /** Told once when the HSM stops answering and once when a new session works again (for the log). */
  onOutage?: (change: { state: "down" | "up"; reason: string }) => void;
  /** Milliseconds on a monotonic clock, for the backoff between reopenings (`performance.now`). */
  now?: () => number;
};

/** Stored form: "h1:" + base64(iv | ciphertext | tag), AES-256-GCM under the token's key. */
const PREFIX = "h1:";
/**
 * The fingerprint is a hash of this constant encrypted under the key with an all-zero IV. A fixed IV
 * is acceptable here because it only ever encrypts this one constant (the same input under the same
 * IV gives the same output, which is the point) and is never used for data: data IVs are 12 random
 * bytes from the token's generator.
 */
const FINGERPRINT_PLAINTEXT = Buffer.from("keyward:hsm-seal-fingerprint", "utf8");
const FINGERPRINT_IV = Buffer.alloc(IV_BYTES);
const SELF_TEST_DATA = "keyward:hsm-seal-self-test";
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;

/** A logged-in session and the key in it; `pending` is an operation still running after its deadline. */
type Live = { session: Handle; key: Handle; pending?: Promise<unknown> };

class TimedOut extends Error {}

const loadBinding = async (): Promise<Pkcs11Module> => {
  try {
    const loaded = (await import("pkcs11js")) as Pkcs11Module & { default?: Pkcs11Module };
    // A CommonJS module: Node's import gives its exports as the default.
    return loaded.default ?? loaded;
  } catch (error) {
    throw new SealConfigError(`HSM: the PKCS#11 binding (pkcs11js) cannot be loaded: ${ckrOf(error)}`);
  }
};

/**
 * The HSM seal: AES-256-GCM (96-bit IV from the token's generator, 128-bit tag, the associated data)
 * under the AES key labelled `keyLabel` on the token at slot position `slot`, through PKCS#11. Opening
 * checks everything once (library, token, PIN, key, CKM_AES_GCM, a self-test) and throws
 * `SealConfigError` with the one line to print; after that, a failing device answers `SealUnavailable`
 * and the next call opens a new session (after 1 s, 2 s, … up to 30 s when the reopening fails too).
 *
 * One logged-in session per seal, used by one call at a time (a PKCS#11 session is not for concurrent
 * use): calls queue on a promise chain. Encryption and decryption use the binding's async forms, run
 * off the event loop; the binding has no async form of the short calls around them (`C_EncryptInit`,
 * `C_GenerateRandom`, opening and logging in), which it makes in the calling thread.
 */
export const openHsmSeal = async (config: HsmSealConfig): Promise<RootSeal> => {
  const pkcs11 = await loadBinding();
  let lib: Pkcs11Library;
  try {
    lib = startLibrary(pkcs11, config.libPath);
  } catch (error) {
    throw new SealConfigError(error instanceof OpenFailure ? error.message : `HSM: ${ckrOf(error)}`);
  }
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const now = config.now ?? (() => performance.now());

  /** Runs one async device operation with the deadline; a late one keeps its session until it ends. */
  const timed = <T>(at: Live, op: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        at.pending = op;
        reject(new TimedOut(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      op.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  const retire = (at: Live) => {
    const close = () => closeSessionQuietly(lib, at.session);
    if (at.pending) at.pending.then(close, close);
    else close();
  };
  const encrypt = async (at: Live, iv: Buffer, associatedData: string, plaintext: Buffer) =>
    timed(at, gcmEncrypt(pkcs11, lib, at, iv, Buffer.from(associatedData, "utf8"), plaintext));
  const decrypt = async (at: Live, iv: Buffer, associatedData: string, sealed: Buffer) =>
    timed(at, gcmDecrypt(pkcs11, lib, at, iv, Buffer.from(associatedData, "utf8"), sealed));
  const probe = async (at: Live) => fingerprintOf(await encrypt(at, FINGERPRINT_IV, "", FINGERPRINT_PLAINTEXT));
  const sealWith = async (at: Live, material: Buffer, associatedData: string) => {
    const iv = lib.C_GenerateRandom(at.session, Buffer.alloc(IV_BYTES));
    const body = await encrypt(at, iv, associatedData, material);
    if (body.length !== material.length + TAG_BYTES) throw new Error(`unexpected GCM output (${body.length} bytes)`);
    return PREFIX + Buffer.concat([iv, body]).toString("base64");
  };
  const unsealWith = (at: Live, raw: Buffer, associatedData: string) =>
    decrypt(at, raw.subarray(0, IV_BYTES), associatedData, raw.subarray(IV_BYTES));

  let live: Live | undefined;
  let fingerprint: string;
  try {
    live = await openSession(pkcs11, lib, config);
    try {
      const sample = lib.C_GenerateRandom(live.session, Buffer.alloc(32));
      const sealed = await sealWith(live, sample, SELF_TEST_DATA);
      const opened = await unsealWith(live, Buffer.from(sealed.slice(PREFIX.length), "base64"), SELF_TEST_DATA);
      if (!opened.equals(sample)) throw new Error("the round trip gave other bytes");
      fingerprint = await probe(live);
    } catch (error) {
      retire(live);
      throw new OpenFailure(
        `HSM: the key labelled '${config.keyLabel}' does not support CKM_AES_GCM (self-test: ${ckrOf(error)})`,
        ckrOf(error),
      );
    }
  } catch (error) {
    stopLibrary(lib, config.libPath, undefined);
    throw new SealConfigError(error instanceof OpenFailure ? error.message : `HSM: ${ckrOf(error)}`);
  }

  let ended = false;
  let closing: Promise<void> | undefined;
  let outage: { reason: string; failures: number; retryAt: number; pinRefused: boolean } | undefined;
  let tail: Promise<unknown> = Promise.resolve();

  /** One call at a time on the session: each waits for the one before it, whatever its outcome. */
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };

  /** The session failed: it is given up, and the next call opens another. */
  const lose = (at: Live, what: string, error: unknown) => {
    const reason = error instanceof TimedOut ? error.message : ckrOf(error);
    if (live === at) live = undefined;
    retire(at);
    if (!outage) {
      outage = { reason, failures: 0, retryAt: 0, pinRefused: false };
      config.onOutage?.({ state: "down", reason: `${what} failed (${reason})` });
    }
    return new SealUnavailable(`HSM: ${what} failed (${reason}); a new session is opened on the next attempt`);
  };

  /** The live session, or a new one when the last failed (not before its backoff, never after a PIN refusal). */
  const ensureLive = async (): Promise<Live> => {
    if (ended) throw new SealUnavailable("HSM: the seal is closed");
    if (live) return live;
    const down = outage ?? { reason: "no session", failures: 0, retryAt: 0, pinRefused: false };
    outage = down;
    if (down.pinRefused) throw new SealUnavailable(`${down.reason}; not tried again before a restart`);
    const wait = down.retryAt - now();
    if (wait > 0) throw new SealUnavailable(`${down.reason}; next attempt in ${Math.ceil(wait / 1000)} s`);
    let next: Live | undefined;
    try {
      initialise(pkcs11, lib);
      next = await openSession(pkcs11, lib, { ...config, generateKey: false });
      const current = await probe(next);
      if (current !== fingerprint)
        throw new OpenFailure(
          `HSM: the key labelled '${config.keyLabel}' is another key now (fingerprint ${current}, not ${fingerprint})`,
          "",
        );
    } catch (error) {
      if (next) retire(next);
      down.failures += 1;
      down.retryAt = now() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (down.failures - 1));
      down.reason = error instanceof OpenFailure ? error.message : `HSM: reopening failed (${ckrOf(error)})`;
      down.pinRefused = error instanceof OpenFailure && PIN_REFUSALS.has(error.ckr);
      throw new SealUnavailable(down.reason);
    }
    live = next;
    outage = undefined;
    config.onOutage?.({ state: "up", reason: `a new session after ${down.failures + 1} attempt(s)` });
    return next;
  };

  return {
    kind: "HSM",
    fingerprint,
    seal: (material, associatedData) =>
      serial(async () => {
        const at = await ensureLive();
        try {
          return await sealWith(at, material, associatedData);
        } catch (error) {
          throw lose(at, "sealing", error);
        }
      }),
    unseal: (sealed, associatedData) =>
      serial(async () => {
        const raw = sealed.startsWith(PREFIX) ? Buffer.from(sealed.slice(PREFIX.length), "base64") : undefined;
        if (!raw || raw.length < IV_BYTES + TAG_BYTES) throw new SealMismatch("not sealed by an HSM key");
        const at = await ensureLive();
        try {
          return await unsealWith(at, raw, associatedData);
        } catch (error) {
          if (error instanceof TimedOut || !isTagFailure(ckrOf(error))) throw lose(at, "unsealing", error);
          // A token may answer a failing device with the same return value as a wrong tag: the
          // fingerprint tells them apart (the key still answers as before, so the tag was wrong).
          const same = await probe(at).then(
            (current) => current === fingerprint,
            () => false,
          );
          if (!same) throw lose(at, "unsealing", error);
          throw new SealMismatch(`HSM key '${config.keyLabel}' does not open this root key`);
        }
      }),
    random: (bytes) =>
      serial(async () => {
        if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`cannot draw ${bytes} random bytes`);
        const at = await ensureLive();
        try {
          return Buffer.from(lib.C_GenerateRandom(at.session, Buffer.alloc(bytes)));
        } catch (error) {
          throw lose(at, "C_GenerateRandom", error);
        }
      }),
    close: () =>
      (closing ??= serial(() => {
        ended = true;
        const at = live;
        live = undefined;
        // An operation still running past its deadline is not waited for: finalising ends it.
        stopLibrary(lib, config.libPath, at?.session);
        return Promise.resolve();
      })),
  };
};
