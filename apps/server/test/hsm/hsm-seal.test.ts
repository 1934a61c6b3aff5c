import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHsmSeal, type HsmSealConfig } from "../../src/crypto/hsm-seal";
import { SealConfigError, SealMismatch, SealUnavailable, type RootSeal } from "../../src/crypto/root-seal";
import { startSoftHsm, type SoftHsm } from "./softhsm";

// One SoftHSM2 token store for the file (PKCS#11 initialises once per process); each test its own labels.
let hsm: SoftHsm;
const opened: RootSeal[] = [];

const configOf = (keyLabel: string, extra: Partial<HsmSealConfig> = {}): HsmSealConfig => ({
  libPath: hsm.libPath,
  pin: hsm.pin,
  slot: 0,
  keyLabel,
  generateKey: false,
  ...extra,
});
const open = async (keyLabel: string, extra: Partial<HsmSealConfig> = {}) => {
  const seal = await openHsmSeal(configOf(keyLabel, extra));
  opened.push(seal);
  return seal;
};
/** What opening refuses with: the error, which must be a SealConfigError. */
const refusal = async (config: HsmSealConfig) => {
  const error = await openHsmSeal(config).then(
    (seal) => seal.close().then(() => new Error("opened")),
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(SealConfigError);
  return (error as Error).message;
};
const closeAll = async () => {
  for (const seal of opened.splice(0)) await seal.close();
};
const material = () => Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256));

beforeAll(async () => {
  hsm = await startSoftHsm();
  await Promise.all(["root-a", "root-b", "replaced", "vanishing", "twice", "twice"].map((label) => hsm.makeKey(label)));
  await hsm.makeWrapOnlyKey("wrap-only");
}, 300_000);

afterAll(async () => {
  await closeAll();
  hsm?.stop();
});

describe("the HSM seal on SoftHSM2", () => {
  it("seals root-key material and opens it only with the same associated data", async () => {
    const seal = await open("root-a");
    expect(seal.kind).toBe("HSM");
    expect(seal.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    const sealed = await seal.seal(material(), "root-key:1");
    expect(sealed).toMatch(/^h1:/);
    // iv (12) | ciphertext (32) | tag (16)
    expect(Buffer.from(sealed.slice(3), "base64")).toHaveLength(60);
    expect(await seal.seal(material(), "root-key:1")).not.toBe(sealed);
    expect(await seal.unseal(sealed, "root-key:1")).toEqual(material());

    await expect(seal.unseal(sealed, "root-key:2")).rejects.toBeInstanceOf(SealMismatch);
    const raw = Buffer.from(sealed.slice(3), "base64");
    raw[20] = raw[20]! ^ 1;
    await expect(seal.unseal(`h1:${raw.toString("base64")}`, "root-key:1")).rejects.toBeInstanceOf(SealMismatch);
    await expect(seal.unseal("s1:AAAA", "root-key:1")).rejects.toBeInstanceOf(SealMismatch);
    // A mismatch leaves the session usable.
    expect(await seal.unseal(sealed, "root-key:1")).toEqual(material());

    const random = await seal.random(32);
    expect(random).toHaveLength(32);
    expect(random).not.toEqual(await seal.random(32));
  });

  it("after a restart (a new seal once the first closed) opens what the first sealed, under the same fingerprint", async () => {
    const first = await openHsmSeal(configOf("root-a"));
    const sealed = await first.seal(material(), "root-key:3");
    await first.close();
    await first.close();
    await expect(first.seal(material(), "root-key:3")).rejects.toBeInstanceOf(SealUnavailable);

    const second = await open("root-a");
    expect(second.fingerprint).toBe(first.fingerprint);
    expect(await second.unseal(sealed, "root-key:3")).toEqual(material());
  });

  it("tells another key apart by its fingerprint, also one that took the same label", async () => {
    const a = await open("root-a");
    const b = await open("root-b");
    expect(b.fingerprint).not.toBe(a.fingerprint);
    const sealed = await a.seal(material(), "root-key:1");
    await expect(b.unseal(sealed, "root-key:1")).rejects.toBeInstanceOf(SealMismatch);

    const before = await openHsmSeal(configOf("replaced"));
    const sealedBefore = await before.seal(material(), "root-key:1");
    await before.close();
    await hsm.deleteKey("replaced");
    await hsm.makeKey("replaced");
    const after = await open("replaced");
    expect(after.fingerprint).not.toBe(before.fingerprint);
    await expect(after.unseal(sealedBefore, "root-key:1")).rejects.toBeInstanceOf(SealMismatch);

    // Seals open at once share the process's login: closing one leaves the others working.
    await b.close();
    expect(await a.unseal(sealed, "root-key:1")).toEqual(material());
  });

  it("generates a missing key only when asked to, and then finds it", async () => {
    expect(await refusal(configOf("made-here"))).toBe(
      "HSM: no AES key labelled 'made-here' on the token (create it, or set HSM_GENERATE_KEY=true)",
    );
    const made = await open("made-here", { generateKey: true });
    const sealed = await made.seal(material(), "root-key:1");
    const listed = await hsm.listKeys();
    const entry = listed.slice(listed.indexOf("label:      made-here"));
    expect(entry).toMatch(/Usage:\s+encrypt, decrypt\n/);
    expect(entry).toMatch(/Access:\s+sensitive, always sensitive, never extractable, local/);

    const found = await open("made-here");
    expect(found.fingerprint).toBe(made.fingerprint);
    expect(await found.unseal(sealed, "root-key:1")).toEqual(material());
  });

  it("serialises calls: 50 seals, unseals and random draws at once all succeed", async () => {
    const seal = await open("root-a");
    const inputs = Array.from({ length: 50 }, (_, i) => Buffer.alloc(32, i));
    const sealed = await Promise.all(inputs.map((input, i) => seal.seal(input, `root-key:${i}`)));
    const [opened50, randoms] = await Promise.all([
      Promise.all(sealed.map((text, i) => seal.unseal(text, `root-key:${i}`))),
      Promise.all(inputs.map(() => seal.random(16))),
    ]);
    expect(opened50).toEqual(inputs);
    expect(new Set(randoms.map((r) => r!.toString("hex"))).size).toBe(50);
  });

  it("answers SealUnavailable when its session is lost, and opens a new one on the next call", async () => {
    const changes: string[] = [];
    const seal = await open("root-a", { onOutage: (change) => changes.push(change.state) });
    const sealed = await seal.seal(material(), "root-key:1");
    await hsm.dropSessions();
    const lost = await seal.unseal(sealed, "root-key:1").catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(SealUnavailable);
    expect((lost as Error).message).toMatch(/^HSM: unsealing failed \(CKR_SESSION_HANDLE_INVALID\)/);
    expect(await seal.unseal(sealed, "root-key:1")).toEqual(material());
    expect(changes).toEqual(["down", "up"]);
  });

  it("waits longer between reopenings that fail, and tells the key that took its label apart", async () => {
    let clock = 0;
    const seal = await open("vanishing", { now: () => clock });
    const sealed = await seal.seal(material(), "root-key:1");
    await hsm.deleteKey("vanishing");
    await hsm.dropSessions();
    const failure = () => seal.unseal(sealed, "root-key:1").catch((error: unknown) => (error as Error).message);
    expect(await failure()).toMatch(/^HSM: unsealing failed \(CKR_SESSION_HANDLE_INVALID\)/);
    const missing = "HSM: no AES key labelled 'vanishing' on the token (create it, or set HSM_GENERATE_KEY=true)";
    expect(await failure()).toBe(missing);
    expect(await failure()).toBe(`${missing}; next attempt in 1 s`);
    clock += 1000;
    expect(await failure()).toBe(missing);
    expect(await failure()).toBe(`${missing}; next attempt in 2 s`);
    await hsm.makeKey("vanishing");
    clock += 2000;
    expect(await failure()).toMatch(
      /^HSM: the key labelled 'vanishing' is another key now \(fingerprint [0-9a-f]{16}, not /,
    );
    expect(await failure()).toMatch(/; next attempt in 4 s$/);
  });
});

describe("the HSM seal refuses to start with one line", () => {
  it("for a library that does not load", async () => {
    expect(await refusal({ ...configOf("root-a"), libPath: "/nonexistent/libpkcs11.so" })).toBe(
      "HSM: cannot load PKCS#11 library /nonexistent/libpkcs11.so: cannot open shared object file: No such file or directory",
    );
  });

  it("for a slot position without an initialised token", async () => {
    // SoftHSM2 lists the initialised token, then one empty slot.
    expect(await refusal(configOf("root-a", { slot: 1 }))).toBe(
      "HSM: no initialised token at slot position 1 (2 slots listed)",
    );
    expect(await refusal(configOf("root-a", { slot: 5 }))).toBe(
      "HSM: no initialised token at slot position 5 (2 slots listed)",
    );
  });

  it("for a label that names no single key able to encrypt", async () => {
    expect(await refusal(configOf("twice"))).toBe(
      "HSM: more than one AES key labelled 'twice' on the token (the label must name one key)",
    );
    expect(await refusal(configOf("wrap-only"))).toBe(
      "HSM: the key labelled 'wrap-only' does not support CKM_AES_GCM (self-test: CKR_KEY_FUNCTION_NOT_PERMITTED)",
    );
  });

  it("for a library that does not initialise", async () => {
    // Initialisation is the process's: only a process with no seal open initialises the library.
    await closeAll();
    process.env.SOFTHSM2_CONF = "/nonexistent/softhsm2.conf";
    try {
      expect(await refusal(configOf("root-a"))).toBe("HSM: the PKCS#11 library did not initialise (CKR_GENERAL_ERROR)");
    } finally {
      process.env.SOFTHSM2_CONF = hsm.conf;
    }
  });

  it("for a wrong PIN, which it names without the PIN", async () => {
    // The login is the process's: only a process with no seal open asks the token about a PIN.
    await closeAll();
    const message = await refusal(configOf("root-a", { pin: "87654321" }));
    expect(message).toBe("HSM: wrong PIN for the token at slot position 0 (CKR_PIN_INCORRECT)");
    expect(message).not.toContain("87654321");
    expect(message).not.toContain(hsm.pin);
    // The right PIN still works: the failed start released the library.
    const seal = await open("root-a");
    expect(await seal.unseal(await seal.seal(material(), "root-key:1"), "root-key:1")).toEqual(material());
  });

  it("and a PIN changed on the token while serving is SealUnavailable, not tried again", async () => {
    await closeAll();
    const seal = await open("root-a");
    const sealed = await seal.seal(material(), "root-key:1");
    const newPin = "11112222";
    await hsm.changePin(hsm.pin, newPin);
    try {
      await hsm.dropSessions();
      await expect(seal.unseal(sealed, "root-key:1")).rejects.toBeInstanceOf(SealUnavailable);
      const refused = await seal.unseal(sealed, "root-key:1").catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SealUnavailable);
      expect((refused as Error).message).toBe("HSM: wrong PIN for the token at slot position 0 (CKR_PIN_INCORRECT)");
      const again = await seal.unseal(sealed, "root-key:1").catch((error: unknown) => error);
      expect((again as Error).message).toBe(
        "HSM: wrong PIN for the token at slot position 0 (CKR_PIN_INCORRECT); not tried again before a restart",
      );
      for (const text of [(refused as Error).message, (again as Error).message]) {
        expect(text).not.toContain(hsm.pin);
        expect(text).not.toContain(newPin);
      }
    } finally {
      await closeAll();
      await hsm.changePin(newPin, hsm.pin);
    }
  });
});
