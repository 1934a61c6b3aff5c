import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { ensureProjectKey } from "../project-keys/project-key.service";
import { openSecretRow } from "./secret-crypto";
import {
  insertNewSecrets,
  newSecretId,
  recordDeletions,
  stateOf,
  writeSecretUpdate,
  type SecretWriter,
} from "./secret-persist";
import { deleteSecretRows, findSecretByKey } from "./secret.repository";

/**
 * Writes values the platform owns (a rotation's mapped secrets) into a folder, inside the caller's
 * transaction: an existing secret gets a new version with the value, a missing one is created. No
 * permission check here: the caller decided the write (the rotation was created by someone allowed
 * to create those secrets). Keys whose value is unchanged are left alone.
 */
export const writeSystemSecrets = async (
  ctx: SecretWriter,
  trx: Tx,
  target: { projectId: string; folderId: string },
  values: Readonly<Record<string, string>>,
) => {
  const key = await ensureProjectKey(ctx.deps, trx, target.projectId);
  const creates = [];
  for (const [name, value] of Object.entries(values)) {
    const row = await findSecretByKey(trx, target.folderId, name, true);
    if (!row) {
      creates.push({
        id: newSecretId(),
        folderId: target.folderId,
        key: name,
        value,
        comment: "",
        skipMultilineEncoding: false,
        reminderNote: null,
        reminderRepeatDays: null,
        metadata: [],
        tags: [],
      });
      continue;
    }
    const before = stateOf(openSecretRow(key, row));
    if (before.value !== value) await writeSecretUpdate(ctx, trx, key, before, { ...before, value });
  }
  await insertNewSecrets(ctx, trx, key, creates);
};

/** The keys among `names` that exist in a folder (a rotation may only create new secrets). */
export const existingSecretNames = async (db: Database, folderId: string, names: readonly string[]) => {
  const found: string[] = [];
  for (const name of names) if (await findSecretByKey(db, folderId, name)) found.push(name);
  return found;
};

/** Deletes the platform-owned secrets among `names` in a folder (a rotation deleted with its secrets), recording their last versions. */
export const deleteSystemSecrets = async (
  ctx: SecretWriter,
  trx: Tx,
  target: { projectId: string; folderId: string },
  names: readonly string[],
) => {
  const key = await ensureProjectKey(ctx.deps, trx, target.projectId);
  const deleted = [];
  for (const name of names) {
    const row = await findSecretByKey(trx, target.folderId, name, true);
    if (row) deleted.push({ state: stateOf(openSecretRow(key, row)), version: row.version });
  }
  if (deleted.length === 0) return;
  await deleteSecretRows(
    trx,
    target.folderId,
    deleted.map((d) => d.state.key),
  );
  await recordDeletions(ctx, trx, key, deleted);
};
