import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type * as Pkcs11 from "pkcs11js";
import { ensureDebianPackages } from "../services/debian";

const run = promisify(execFile);

export const SOFTHSM_LIB = "/usr/lib/softhsm/libsofthsm2.so";

/**
 * Runs `step` on the token at slot position 0 through a library handle of its own. The library's state
 * is the process's: initialised by open seals already, it is left so; else it is finalised after.
 */
const withToken = async (step: (lib: Pkcs11.PKCS11, slot: Buffer, pkcs11: typeof Pkcs11) => void) => {
  const loaded = (await import("pkcs11js")) as typeof Pkcs11 & { default?: typeof Pkcs11 };
  const pkcs11 = loaded.default ?? loaded;
  const lib = new pkcs11.PKCS11();
  lib.load(SOFTHSM_LIB);
  let initialised = false;
  try {
    lib.C_Initialize();
    initialised = true;
  } catch {
    // initialised by the seals already
  }
  try {
    step(lib, lib.C_GetSlotList(false)[0]!, pkcs11);
  } finally {
    if (initialised) lib.C_Finalize();
    lib.close();
  }
};

/**
 * SoftHSM2 with a token store of its own: a private `softhsm2.conf` (file object store in a temporary
 * directory) named by `SOFTHSM2_CONF`, and one initialised token, first in the slot list (slot
 * position 0; the empty slot SoftHSM2 always adds follows it).
 *
 * The library reads `SOFTHSM2_CONF` when it is initialised, which PKCS#11 does once per process until
 * it is finalised: call this before opening any seal in the process (one store per test file), close
 * every seal before the file ends, and give each test its own key labels.
 */
const startStore = async () => {
  ensureDebianPackages("/usr/bin/softhsm2-util", ["softhsm2"]);
  ensureDebianPackages(SOFTHSM_LIB, ["softhsm2"]);
  ensureDebianPackages("/usr/bin/pkcs11-tool", ["opensc"]);
  const dir = mkdtempSync(join(tmpdir(), "keyward-softhsm-"));
  const conf = join(dir, "softhsm2.conf");
  const tokens = join(dir, "tokens");
  writeFileSync(
    conf,
    [`directories.tokendir = ${tokens}`, "objectstore.backend = file", "log.level = ERROR", ""].join("\n"),
  );
  mkdirSync(tokens);
  process.env.SOFTHSM2_CONF = conf;
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  const tokenLabel = "keyward-test";
  const soPin = "56781234";
  const pin = "12345678";
  await run("softhsm2-util", ["--init-token", "--free", "--label", tokenLabel, "--so-pin", soPin, "--pin", pin], {
    env,
  });
  // One pkcs11-tool at a time: two processes writing the token's files at once can fail.
  let queue: Promise<unknown> = Promise.resolve();
  const tool = (args: string[]) => {
    const next = queue.then(() => run("pkcs11-tool", ["--module", SOFTHSM_LIB, ...args], { env }));
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    libPath: SOFTHSM_LIB,
    pin,
    soPin,
    tokenLabel,
    conf,
    /** A sensitive, never-extractable AES-256 key on the token, made as an operator would. */
    makeKey: async (label: string) => {
      await tool(["--login", "--pin", pin, "--keygen", "--key-type", "AES:32", "--label", label, "--sensitive"]);
    },
    deleteKey: async (label: string) => {
      await tool(["--login", "--pin", pin, "--delete-object", "--type", "secrkey", "--label", label]);
    },
    /** pkcs11-tool's description of the secret keys on the token (labels, usage, access). */
    listKeys: async () => (await tool(["--login", "--pin", pin, "--list-objects", "--type", "secrkey"])).stdout,
    /** An AES-256 token key that may wrap but not encrypt: the seal's self-test fails on it. */
    makeWrapOnlyKey: (label: string) =>
      withToken((lib, slot, pkcs11) => {
        const session = lib.C_OpenSession(slot, pkcs11.CKF_SERIAL_SESSION | pkcs11.CKF_RW_SESSION);
        try {
          try {
            lib.C_Login(session, pkcs11.CKU_USER, pin);
          } catch {
            // logged in by an open seal already
          }
          lib.C_GenerateKey(session, { mechanism: pkcs11.CKM_AES_KEY_GEN }, [
            { type: pkcs11.CKA_CLASS, value: pkcs11.CKO_SECRET_KEY },
            { type: pkcs11.CKA_KEY_TYPE, value: pkcs11.CKK_AES },
            { type: pkcs11.CKA_VALUE_LEN, value: 32 },
            { type: pkcs11.CKA_LABEL, value: label },
            { type: pkcs11.CKA_TOKEN, value: true },
            { type: pkcs11.CKA_ENCRYPT, value: false },
            { type: pkcs11.CKA_DECRYPT, value: false },
            { type: pkcs11.CKA_WRAP, value: true },
            { type: pkcs11.CKA_UNWRAP, value: true },
          ]);
        } finally {
          lib.C_CloseSession(session);
        }
      }),
    /**
     * Ends every session of this process on the token behind the seals' backs (as a token reset or
     * a device fault would): their next call fails with a session error.
     */
    dropSessions: () => withToken((lib, slot) => lib.C_CloseAllSessions(slot)),
    /**
     * Changes the token's user PIN, as an operator would. Done from this process: SoftHSM2 keeps a
     * token's PIN in memory while initialised, so a change from another process would not be seen.
     */
    changePin: (from: string, to: string) =>
      withToken((lib, slot, pkcs11) => {
        const session = lib.C_OpenSession(slot, pkcs11.CKF_SERIAL_SESSION | pkcs11.CKF_RW_SESSION);
        try {
          lib.C_SetPIN(session, from, to);
        } finally {
          lib.C_CloseSession(session);
        }
      }),
    /** The store outlives a file: test files share a process (and its initialised library), so it goes at exit. */
    stop: () => undefined,
    dir,
  };
};

let started: ReturnType<typeof startStore> | undefined;

/**
 * The process's SoftHSM2 store, started by the first file that asks: PKCS#11 initialises once per
 * process, and test files share their process, so every file of a process uses this one token (each
 * with key labels of its own). Removed when the process exits.
 */
export const startSoftHsm = () => {
  if (!started) {
    started = startStore();
    void started.then(({ dir }) => process.once("exit", () => rmSync(dir, { recursive: true, force: true })));
  }
  return started;
};

export type SoftHsm = Awaited<ReturnType<typeof startSoftHsm>>;
