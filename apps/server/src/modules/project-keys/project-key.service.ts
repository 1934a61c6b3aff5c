import type { Tx } from "../../db/transaction";
import type { AppDeps } from "../../context";
import { dataKeyOf, generateDataKey, type DataKey } from "../../crypto/data-keys";
import type { Database } from "../../db/database";
import type { SecretBox } from "../../crypto/envelope";
import { findProjectDataKey, insertProjectDataKey } from "./project-key.repository";

/**
 * Per-project data keys: each project's key is generated
 * once, stored wrapped by the root key with the project id as associated data, and unwrapped at
 * most once per cache lifetime. Secrets use it now; the KMS module will use the same envelope.
 */
const wrapContext = (projectId: string) => `project-data-key:${projectId}`;

/** A stored project key opened with the root key; throws when it was sealed under another key or altered. */
export const openProjectDataKey = (secretBox: SecretBox, projectId: string, row: { id: string; wrapped_key: string }) =>
  dataKeyOf(row.id, Buffer.from(secretBox.decrypt(row.wrapped_key, wrapContext(projectId)), "base64"));

const unwrap = (deps: AppDeps, projectId: string, row: { id: string; wrapped_key: string }) =>
  openProjectDataKey(deps.secretBox, projectId, row);

/** The project's key for reading, or undefined when it has none yet (then it holds nothing encrypted). */
export const findProjectKey = async (
  deps: AppDeps,
  projectId: string,
  db: Database = deps.db,
): Promise<DataKey | undefined> => {
  const cached = deps.dataKeys.get(projectId);
  if (cached) return cached;
  const row = await findProjectDataKey(db, projectId);
  if (!row) return undefined;
  const key = unwrap(deps, projectId, row);
  deps.dataKeys.set(projectId, key);
  return key;
};

/**
 * The project's key for writing, created on first use inside the writer's transaction. A key this
 * transaction inserted is not cached (it vanishes if the transaction rolls back); a committed one is.
 */
export const ensureProjectKey = async (deps: AppDeps, trx: Tx, projectId: string): Promise<DataKey> => {
  const cached = deps.dataKeys.get(projectId);
  if (cached) return cached;
  // Not cached from here: the row may be this transaction's own, uncommitted insert.
  const existing = await findProjectDataKey(trx, projectId);
  if (existing) return unwrap(deps, projectId, existing);
  const raw = generateDataKey();
  const inserted = await insertProjectDataKey(
    trx,
    projectId,
    deps.secretBox.encrypt(raw.toString("base64"), wrapContext(projectId)),
  );
  raw.fill(0);
  if (inserted) return unwrap(deps, projectId, inserted);
  // Another transaction created it first and has committed (the insert waited for it).
  const winner = await findProjectDataKey(trx, projectId);
  if (!winner) throw new Error("project data key vanished");
  return unwrap(deps, projectId, winner);
};
