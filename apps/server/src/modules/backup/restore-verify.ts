import type { DataKey } from "../../crypto/data-keys";
import type { SecretBox } from "../../crypto/envelope";
import type { Database } from "../../db/database";
import { verifyAllAuditChains } from "../audit/audit.service";
import { openProjectDataKey } from "../project-keys/project-key.service";
import { secretAad } from "../secrets/secret-crypto";
import { SEALED_TABLES } from "../root-keys/sealed-columns";
import { sealedRowsAfter } from "../root-keys/root-key.service";
import { projectDataKeysAfter, sealedSecretRowsAfter, type SealedSecretRow } from "./backup.repository";
import { BackupRefusal } from "./backup-refusal";

const PAGE = 5_000;

export type Verified = {
  dataKeys: number;
  sealedValues: number;
  rootSealedValues: number;
  auditEvents: number;
  auditChains: number;
};

const refuse = (what: string) => new BackupRefusal(`restore refused: ${what}; nothing was restored`);

/** Every project's data key, opened with the root key. */
const openDataKeys = async (db: Database, secretBox: SecretBox) => {
  const keys = new Map<string, DataKey>();
  for (let after: string | undefined; ;) {
    const rows = await projectDataKeysAfter(db, after, PAGE);
    for (const row of rows) {
      try {
        keys.set(row.project_id, openProjectDataKey(secretBox, row.project_id, row));
      } catch {
        throw refuse(`the data key of project ${row.project_id} does not open under this ENCRYPTION_KEY`);
      }
    }
    if (rows.length < PAGE) return keys;
    after = rows[rows.length - 1]!.id;
  }
};

/** Opens a row's sealed value, comment and encrypted metadata; returns how many ciphertexts it held. */
const openRow = (key: DataKey, table: "secrets" | "secret_versions", row: SealedSecretRow) => {
  let opened = 0;
  if (row.encrypted_fields !== null) {
    key.openParts(row.encrypted_fields, secretAad(table, row.id, "fields"), 2);
    opened += 1;
  }
  for (const [column, stored] of [
    ["value", row.encrypted_value],
    ["comment", row.encrypted_comment],
  ] as const) {
    if (stored === null) continue;
    key.open(stored, secretAad(table, row.id, column));
    opened += 1;
  }
  for (const entry of row.metadata ?? []) {
    if (!entry.isEncrypted) continue;
    key.open(entry.value, secretAad(table, row.id, `metadata:${entry.key}`));
    opened += 1;
  }
  return opened;
};

/** Every secret's and version's sealed fields, each under its project's data key. */
const openSecrets = async (db: Database, keys: Map<string, DataKey>) => {
  let opened = 0;
  for (const table of ["secrets", "secret_versions"] as const) {
    for (let after: string | undefined; ;) {
      const rows = await sealedSecretRowsAfter(db, table, after, PAGE);
      for (const row of rows) {
        const key = keys.get(row.project_id);
        try {
          if (!key) throw new Error("no data key");
          opened += openRow(key, table, row);
        } catch {
          throw refuse(`a sealed value of ${table} row ${row.id} does not open under its project's data key`);
        }
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
  }
  return opened;
};

/**
 * Every other value sealed straight under the root key (app connection credentials, audit stream
 * secrets, CA keys, machine-login settings …: the registry a root-key rotation walks), each with the
 * associated data of its row; project data keys are opened above.
 */
const openRootSealed = async (db: Database, secretBox: SecretBox) => {
  let opened = 0;
  for (const entry of SEALED_TABLES) {
    if (entry.table === "project_data_keys") continue;
    for (let after: string | undefined; ;) {
      const rows = await sealedRowsAfter(db, entry, after, PAGE);
      for (const row of rows)
        for (const column of entry.columns) {
          const stored = row[column.name];
          if (!stored) continue;
          try {
            secretBox.decrypt(stored, column.context(row as Record<string, string>));
          } catch {
            throw refuse(`${entry.table}.${column.name} of ${row[entry.key]} does not open under this ENCRYPTION_KEY`);
          }
          opened += 1;
        }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]![entry.key]!;
    }
  }
  return opened;
};

/**
 * What a restored instance must pass before it is handed over: every project data key opens under the
 * root key, every other root-sealed value opens under it, every secret's and version's sealed value,
 * comment and metadata opens under its project's key, and every audit chain verifies from its anchor to its head with no event outside a chain.
 */
export const verifyRestored = async (db: Database, secretBox: SecretBox): Promise<Verified> => {
  const keys = await openDataKeys(db, secretBox);
  const sealedValues = await openSecrets(db, keys);
  const rootSealedValues = await openRootSealed(db, secretBox);
  const audit = await verifyAllAuditChains(db);
  if (!audit.valid) {
    const at = "firstInvalidEventId" in audit ? ` at event ${audit.firstInvalidEventId}` : "";
    throw refuse(`the audit log does not verify (${audit.reason}${at})`);
  }
  return { dataKeys: keys.size, sealedValues, rootSealedValues, auditEvents: audit.checked, auditChains: audit.chains };
};
