import type * as Pkcs11 from "pkcs11js";

/**
 * The PKCS#11 side of the HSM seal: loading the library, finding the token, logging in, finding (or
 * generating) the labelled AES key, and AES-GCM under it. `hsm-seal.ts` builds the seal on these.
 *
 * The binding (`pkcs11js`) is loaded by the caller with a dynamic import, so a server without an HSM
 * never loads the native addon. Its errors carry the PKCS#11 return value's name (`CKR_…`) as their
 * message; `load` failures carry the dynamic loader's text.
 */
export type Pkcs11Module = typeof Pkcs11;
export type Pkcs11Library = Pkcs11.PKCS11;
export type Handle = Buffer;

export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** A failure while opening: its one-line message (never the PIN) and the return value's name ("" if none). */
export class OpenFailure extends Error {
  constructor(
    message: string,
    readonly ckr: string,
  ) {
    super(message);
  }
}

/** The name of a PKCS#11 return value (`CKR_…`) in an error from the binding, or else the error's text. */
export const ckrOf = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error);
  return /^CKR_\w+$/.test(message) ? message : message.split("\n")[0]!;
};

const quietly = (step: () => unknown) => {
  try {
    step();
  } catch {
    // best effort: what is being released may already be gone
  }
};

/**
 * How many open seals of this process use each library. PKCS#11 keeps its initialisation and its login
 * per process, not per handle: one seal's `C_Logout` or `C_Finalize` would end every other seal's
 * session on the same library, so only the last one to close logs out and finalises. This counts open
 * handles to state the library itself holds process-wide; it caches nothing.
 */
const usersOfLibrary = new Map<string, number>();

/** `C_Initialize` with the operating system's locks (the async calls run on other threads). */
export const initialise = (pkcs11: Pkcs11Module, lib: Pkcs11Library) => {
  try {
    lib.C_Initialize({ flags: pkcs11.CKF_OS_LOCKING_OK });
  } catch (error) {
    // Another seal of this process (or a restart of this one) initialised it first.
    if (ckrOf(error) !== "CKR_CRYPTOKI_ALREADY_INITIALIZED") throw error;
  }
};

/** Loads and initialises the library for one seal; counted until `stopLibrary`. */
export const startLibrary = (pkcs11: Pkcs11Module, libPath: string): Pkcs11Library => {
  const lib = new pkcs11.PKCS11();
  try {
    lib.load(libPath);
  } catch (error) {
    // The loader's text usually begins with the path again.
    const text = ckrOf(error);
    const reason = text.startsWith(`${libPath}: `) ? text.slice(libPath.length + 2) : text;
    throw new OpenFailure(`HSM: cannot load PKCS#11 library ${libPath}: ${reason}`, "");
  }
  try {
    initialise(pkcs11, lib);
  } catch (error) {
    quietly(() => lib.close());
    throw new OpenFailure(`HSM: the PKCS#11 library did not initialise (${ckrOf(error)})`, ckrOf(error));
  }
  usersOfLibrary.set(libPath, (usersOfLibrary.get(libPath) ?? 0) + 1);
  return lib;
};

/**
 * Releases one seal's hold: closes its session, and when it was the library's last user in this
 * process, logs out and finalises first; then unloads its handle. Errors are ignored (the device may
 * be gone).
 */
export const stopLibrary = (lib: Pkcs11Library, libPath: string, session: Handle | undefined) => {
  const users = (usersOfLibrary.get(libPath) ?? 1) - 1;
  if (users > 0) usersOfLibrary.set(libPath, users);
  else usersOfLibrary.delete(libPath);
  if (session) {
    if (users === 0) quietly(() => lib.C_Logout(session));
    quietly(() => lib.C_CloseSession(session));
  }
  if (users === 0) quietly(() => lib.C_Finalize());
  quietly(() => lib.close());
};

export const closeSessionQuietly = (lib: Pkcs11Library, session: Handle) => quietly(() => lib.C_CloseSession(session));

/** The slot at `position` in the list of all slots, when it holds an initialised token. */
const slotAt = (pkcs11: Pkcs11Module, lib: Pkcs11Library, position: number): Handle => {
  let slots: Handle[];
  try {
    slots = lib.C_GetSlotList(false);
  } catch (error) {
    throw new OpenFailure(`HSM: the library lists no slots (${ckrOf(error)})`, ckrOf(error));
  }
  const slot = Number.isInteger(position) && position >= 0 ? slots[position] : undefined;
  let initialised = false;
  try {
    initialised = slot !== undefined && (lib.C_GetTokenInfo(slot).flags & pkcs11.CKF_TOKEN_INITIALIZED) !== 0;
  } catch {
    // no token in the slot (CKR_TOKEN_NOT_PRESENT)
  }
  if (!slot || !initialised)
    throw new OpenFailure(`HSM: no initialised token at slot position ${position} (${slots.length} slots listed)`, "");
  return slot;
};

/** A token's refusals of the PIN: never tried again, a real HSM locks (or wipes) the token after a few. */
export const PIN_REFUSALS: ReadonlySet<string> = new Set(["CKR_PIN_INCORRECT", "CKR_PIN_LOCKED", "CKR_PIN_EXPIRED"]);

/** Logs the session's application in as the token's user; a login another seal holds already counts. */
const logIn = (pkcs11: Pkcs11Module, lib: Pkcs11Library, session: Handle, pin: string, position: number) => {
  try {
    lib.C_Login(session, pkcs11.CKU_USER, pin);
  } catch (error) {
    const ckr = ckrOf(error);
    if (ckr === "CKR_USER_ALREADY_LOGGED_IN") return;
    if (PIN_REFUSALS.has(ckr))
      throw new OpenFailure(`HSM: wrong PIN for the token at slot position ${position} (${ckr})`, ckr);
    throw new OpenFailure(`HSM: cannot log in to the token at slot position ${position} (${ckr})`, ckr);
  }
};

const findKeys = (pkcs11: Pkcs11Module, lib: Pkcs11Library, session: Handle, label: string): Handle[] => {
  lib.C_FindObjectsInit(session, [
    { type: pkcs11.CKA_CLASS, value: pkcs11.CKO_SECRET_KEY },
    { type: pkcs11.CKA_KEY_TYPE, value: pkcs11.CKK_AES },
    { type: pkcs11.CKA_LABEL, value: label },
  ]);
  try {
    return lib.C_FindObjects(session, 2);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
};

/** A token AES-256 key that never leaves the token and only encrypts and decrypts. */
const generateKey = (pkcs11: Pkcs11Module, lib: Pkcs11Library, session: Handle, label: string) =>
  lib.C_GenerateKeyAsync(session, { mechanism: pkcs11.CKM_AES_KEY_GEN }, [
    { type: pkcs11.CKA_CLASS, value: pkcs11.CKO_SECRET_KEY },
    { type: pkcs11.CKA_KEY_TYPE, value: pkcs11.CKK_AES },
    { type: pkcs11.CKA_VALUE_LEN, value: 32 },
    { type: pkcs11.CKA_LABEL, value: label },
    { type: pkcs11.CKA_TOKEN, value: true },
    { type: pkcs11.CKA_PRIVATE, value: true },
    { type: pkcs11.CKA_SENSITIVE, value: true },
    { type: pkcs11.CKA_EXTRACTABLE, value: false },
    { type: pkcs11.CKA_ENCRYPT, value: true },
    { type: pkcs11.CKA_DECRYPT, value: true },
    { type: pkcs11.CKA_WRAP, value: false },
    { type: pkcs11.CKA_UNWRAP, value: false },
    { type: pkcs11.CKA_SIGN, value: false },
    { type: pkcs11.CKA_VERIFY, value: false },
    { type: pkcs11.CKA_DERIVE, value: false },
  ]);

export type SessionOptions = { pin: string; slot: number; keyLabel: string; generateKey: boolean };

/**
 * Opens a logged-in read/write session on the token at the slot position and finds the one AES key
 * with the label (generating it when asked and absent). Every failure is an `OpenFailure` with its
 * one-line message; the session opened before it is closed again.
 */
export const openSession = async (
  pkcs11: Pkcs11Module,
  lib: Pkcs11Library,
  options: SessionOptions,
): Promise<{ session: Handle; key: Handle }> => {
  const slot = slotAt(pkcs11, lib, options.slot);
  let mechanisms: number[];
  try {
    mechanisms = lib.C_GetMechanismList(slot);
  } catch (error) {
    throw new OpenFailure(`HSM: the token's mechanisms cannot be listed (${ckrOf(error)})`, ckrOf(error));
  }
  if (!mechanisms.includes(pkcs11.CKM_AES_GCM))
    throw new OpenFailure("HSM: the token does not support CKM_AES_GCM", "");
  let session: Handle;
  try {
    session = lib.C_OpenSession(slot, pkcs11.CKF_SERIAL_SESSION | pkcs11.CKF_RW_SESSION);
  } catch (error) {
    const ckr = ckrOf(error);
    throw new OpenFailure(`HSM: cannot open a session on the token at slot position ${options.slot} (${ckr})`, ckr);
  }
  try {
    logIn(pkcs11, lib, session, options.pin, options.slot);
    let keys: Handle[];
    try {
      keys = findKeys(pkcs11, lib, session, options.keyLabel);
      // Meant for one instance's first start: two starting at once could each create a key.
      if (keys.length === 0 && options.generateKey) keys = [await generateKey(pkcs11, lib, session, options.keyLabel)];
    } catch (error) {
      const ckr = ckrOf(error);
      throw new OpenFailure(`HSM: cannot look up or create the key labelled '${options.keyLabel}' (${ckr})`, ckr);
    }
    if (keys.length === 0)
      throw new OpenFailure(
        `HSM: no AES key labelled '${options.keyLabel}' on the token (create it, or set HSM_GENERATE_KEY=true)`,
        "",
      );
    if (keys.length > 1)
      throw new OpenFailure(
        `HSM: more than one AES key labelled '${options.keyLabel}' on the token (the label must name one key)`,
        "",
      );
    return { session, key: keys[0]! };
  } catch (error) {
    closeSessionQuietly(lib, session);
    throw error;
  }
};

/** CK_GCM_PARAMS as PKCS#11 2.40 has it (with the IV's length in bits). */
const gcm = (pkcs11: Pkcs11Module, iv: Buffer, associatedData: Buffer): Pkcs11.Mechanism => {
  const parameter: Pkcs11.GcmParams = {
    type: pkcs11.CK_PARAMS_AES_GCM_v240,
    iv,
    ivBits: IV_BYTES * 8,
    aad: associatedData,
    tagBits: TAG_BYTES * 8,
  };
  return { mechanism: pkcs11.CKM_AES_GCM, parameter };
};

/** AES-GCM encryption on the token, off the event loop: the ciphertext followed by its 16-byte tag. */
export const gcmEncrypt = (
  pkcs11: Pkcs11Module,
  lib: Pkcs11Library,
  at: { session: Handle; key: Handle },
  iv: Buffer,
  associatedData: Buffer,
  plaintext: Buffer,
): Promise<Buffer> => {
  lib.C_EncryptInit(at.session, gcm(pkcs11, iv, associatedData), at.key);
  return lib.C_EncryptAsync(at.session, plaintext, Buffer.alloc(plaintext.length + TAG_BYTES));
};

/** AES-GCM decryption on the token, off the event loop; fails when the tag does not match. */
export const gcmDecrypt = (
  pkcs11: Pkcs11Module,
  lib: Pkcs11Library,
  at: { session: Handle; key: Handle },
  iv: Buffer,
  associatedData: Buffer,
  sealed: Buffer,
): Promise<Buffer> => {
  lib.C_DecryptInit(at.session, gcm(pkcs11, iv, associatedData), at.key);
  return lib.C_DecryptAsync(at.session, sealed, Buffer.alloc(sealed.length));
};

/** What a token answers when a GCM tag does not match (SoftHSM2: CKR_GENERAL_ERROR). */
export const isTagFailure = (ckr: string) =>
  ckr === "CKR_ENCRYPTED_DATA_INVALID" || ckr === "CKR_ENCRYPTED_DATA_LEN_RANGE" || ckr === "CKR_GENERAL_ERROR";
