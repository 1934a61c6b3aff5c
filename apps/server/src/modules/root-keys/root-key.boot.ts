import { randomBytes } from "node:crypto";
import type { Database } from "../../db/database";
import { inTransaction } from "../../db/transaction";
import { createRootKeyring, type RootKeyring } from "../../crypto/root-keyring";
import { SealConfigError, SealMismatch, type RootSeal, type SealKind } from "../../crypto/root-seal";
import {
  databaseHasOrganizations,
  findInstanceSecret,
  insertInstanceSecret,
  insertRootKey,
  listRootKeys,
  hasRootKeys,
  lockRootKeys,
  resealRootKey,
  type RootKeyRow,
} from "./root-key.repository";
import type { Tx } from "../../db/transaction";

/** The seals this process is configured with; at least one. */
export type Seals = {
  software?: RootSeal;
  hsm?: RootSeal;
  /** The label of the HSM key, for messages. */
  hsmKeyLabel?: string;
  /**
   * ENCRYPTION_KEY's (or DATA_DIR/root.key's) bytes: root key version 1 of an instance that sealed
   * under it before root keys had versions, so every value it sealed stays readable.
   */
  legacyKey?: Buffer;
  /**
   * The seal keys being replaced (ENCRYPTION_KEY_PREVIOUS, HSM_KEY_LABEL_PREVIOUS): a version sealed by
   * one of them is opened with it and re-sealed under the current key of its kind at start.
   */
  previous?: RootSeal[];
  /** Set when the software seal's key is the `DATA_DIR/root.key` Keyward generated (no ENCRYPTION_KEY). */
  softwareKeyFile?: string;
};

export const DERIVATION_SECRET = "derivation";
export const rootKeyContext = (version: number) => `root-key:${version}`;
export const instanceSecretContext = (name: string) => `instance-secret:${name}`;

export const sealOf = (seals: Seals, kind: SealKind) => (kind === "HSM" ? seals.hsm : seals.software);

/** 32 random bytes; with an HSM its generator's bytes are mixed in (XOR), so neither source alone decides. */
export const freshMaterial = async (seals: Seals) => {
  const material = randomBytes(32);
  const device = await seals.hsm?.random(32);
  if (device) for (let i = 0; i < 32; i += 1) material[i]! ^= device[i]!;
  return material;
};

const missingSealMessage = (kind: SealKind) =>
  kind === "HSM"
    ? "root keys are sealed by the HSM; set HSM_LIB_PATH, HSM_PIN and HSM_KEY_LABEL"
    : "root keys are sealed with ENCRYPTION_KEY; set it to start (and to migrate)";

/** Opens one stored version with the seal that sealed it; a wrong key is a start-up error naming it. */
/** A seal being replaced that sealed this row, if any. */
const previousSealOf = (seals: Seals, row: Pick<RootKeyRow, "sealed_by" | "seal_fingerprint">) =>
  seals.previous?.find((seal) => seal.kind === row.sealed_by && seal.fingerprint === row.seal_fingerprint);

export const unsealRow = async (seals: Seals, row: RootKeyRow): Promise<Buffer> => {
  const seal = previousSealOf(seals, row) ?? sealOf(seals, row.sealed_by);
  if (!seal) throw new SealConfigError(missingSealMessage(row.sealed_by));
  try {
    return await seal.unseal(row.sealed!, rootKeyContext(row.version));
  } catch (error) {
    if (!(error instanceof SealMismatch)) throw error;
    throw new SealConfigError(
      row.sealed_by === "HSM"
        ? `HSM: key '${seals.hsmKeyLabel ?? ""}' does not open this database's root keys (sealed by key fingerprint ${row.seal_fingerprint})`
        : `ENCRYPTION_KEY does not open this database's root keys (sealed by key fingerprint ${row.seal_fingerprint})`,
    );
  }
};

/** Unseals every live version the keyring lacks into it, and activates the active one. */
export const holdLiveVersions = async (keyring: RootKeyring, seals: Seals, rows: RootKeyRow[]) => {
  for (const row of rows) {
    if (row.state === "retired" || keyring.has(row.version)) continue;
    const material = await unsealRow(seals, row);
    keyring.hold(row.version, material);
    material.fill(0);
  }
  const active = rows.find((row) => row.state === "active");
  if (active && active.version !== keyring.activeVersion) keyring.activate(active.version);
};

/**
 * Versions sealed by a seal key being replaced, re-sealed under the current key of the same kind (in
 * the start's transaction, under the root-keys lock); once every instance has started so, the
 * `_PREVIOUS` variable can go.
 */
const resealFromPrevious = async (trx: Tx, seals: Seals, rows: RootKeyRow[]) => {
  for (const row of rows) {
    if (row.state === "retired" || !previousSealOf(seals, row)) continue;
    const current = sealOf(seals, row.sealed_by);
    if (!current || current.fingerprint === row.seal_fingerprint) continue;
    await resealRow(trx, seals, row, current);
  }
};

/** One stored version opened with the seal that sealed it and sealed again by `target` (same material). */
export const resealRow = async (trx: Tx, seals: Seals, row: RootKeyRow, target: RootSeal) => {
  const material = await unsealRow(seals, row);
  try {
    await resealRootKey(trx, row.version, {
      sealed: await target.seal(material, rootKeyContext(row.version)),
      sealed_by: target.kind,
      seal_fingerprint: target.fingerprint,
    });
  } finally {
    material.fill(0);
  }
};

/**
 * The process's keyring: every live root-key version unsealed, the active one for new seals, and the
 * derivation secret. On a database without root keys, version 1 is created under an advisory lock
 * (so instances starting together agree): the legacy key when there is one and the data may be
 * sealed under it (no HSM, or a database that already holds organizations), random otherwise; sealed
 * by the HSM when one is configured, else by ENCRYPTION_KEY.
 */
export const openKeyring = async (db: Database, seals: Seals): Promise<RootKeyring> => {
  const keyring = createRootKeyring();
  await inTransaction(db, async (trx) => {
    await lockRootKeys(trx);
    const rows = await listRootKeys(trx);
    if (rows.length === 0) {
      const seal = seals.hsm ?? seals.software;
      if (!seal) throw new SealConfigError("no seal for the root keys: set ENCRYPTION_KEY or the HSM_* variables");
      const legacy = seals.legacyKey && (!seals.hsm || (await databaseHasOrganizations(trx)));
      const material = legacy ? Buffer.from(seals.legacyKey!) : await freshMaterial(seals);
      const derivation = legacy ? Buffer.from(seals.legacyKey!) : await freshMaterial(seals);
      await insertRootKey(trx, {
        version: 1,
        sealed: await seal.seal(material, rootKeyContext(1)),
        sealed_by: seal.kind,
        seal_fingerprint: seal.fingerprint,
        state: "active",
      });
      keyring.hold(1, material);
      keyring.activate(1);
      keyring.setDerivationSecret(derivation);
      await insertInstanceSecret(
        trx,
        DERIVATION_SECRET,
        keyring.encrypt(derivation.toString("base64"), instanceSecretContext(DERIVATION_SECRET)),
      );
      material.fill(0);
      derivation.fill(0);
      return;
    }
    await holdLiveVersions(keyring, seals, rows);
    await resealFromPrevious(trx, seals, rows);
    const derivation = await findInstanceSecret(trx, DERIVATION_SECRET);
    if (!derivation) throw new SealConfigError("the instance's derivation secret is missing from instance_secrets");
    keyring.setDerivationSecret(
      Buffer.from(keyring.decrypt(derivation.sealed, instanceSecretContext(DERIVATION_SECRET)), "base64"),
    );
  });
  return keyring;
};

/** What a backup carries of the root: the live versions as their seal sealed them, and the sealed derivation secret. */
export type SealedRoot = {
  rootKeys: {
    version: number;
    state: "active" | "retiring";
    sealed: string;
    sealedBy: SealKind;
    fingerprint: string;
  }[];
  derivation: string;
};

/** The sealed root of a database (read in the caller's snapshot); undefined before it has root keys. */
export const sealedRootOf = async (db: Database): Promise<SealedRoot | undefined> => {
  // A database at an older schema (a restore's intermediate state, an old backup source) has none.
  if (!(await hasRootKeys(db))) return undefined;
  const rows = (await listRootKeys(db)).filter((row) => row.state !== "retired");
  const derivation = await findInstanceSecret(db, DERIVATION_SECRET);
  if (rows.length === 0 || !derivation) return undefined;
  return {
    rootKeys: rows.map((row) => ({
      version: row.version,
      state: row.state as "active" | "retiring",
      sealed: row.sealed!,
      sealedBy: row.sealed_by,
      fingerprint: row.seal_fingerprint,
    })),
    derivation: derivation.sealed,
  };
};

/** A keyring (versions and derivation secret) from a sealed root, opened with `seals`; throws SealConfigError naming a missing or wrong seal. */
export const keyringOfSealedRoot = async (root: SealedRoot, seals: Seals): Promise<RootKeyring> => {
  const keyring = createRootKeyring();
  await holdLiveVersions(
    keyring,
    seals,
    root.rootKeys.map((row) => ({
      version: row.version,
      state: row.state,
      sealed: row.sealed,
      sealed_by: row.sealedBy,
      seal_fingerprint: row.fingerprint,
      created_at: new Date(0),
      retired_at: null,
    })),
  );
  keyring.setDerivationSecret(
    Buffer.from(keyring.decrypt(root.derivation, instanceSecretContext(DERIVATION_SECRET)), "base64"),
  );
  return keyring;
};
