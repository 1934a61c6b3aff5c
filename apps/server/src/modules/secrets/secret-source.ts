import type { RequestContext } from "../../context";
import type { DataKey } from "../../crypto/data-keys";
import type { Database } from "../../db/database";
import { findProjectKey } from "../project-keys/project-key.service";
import type { FolderLoader, FolderSecrets } from "./references/expand";
import { openSecretRow, openSecretValue, type PlainSecret } from "./secret-crypto";
import { listSecretsOfFolders } from "./secret-list.repository";
import { resolveFolder, type SecretRow } from "./secret.repository";

/**
 * Rows as listSecretsOfFolders returns them for an owner (by folder, then key, the shared row before
 * the personal one): each personal row takes the place of the shared row of its key, so its `type`
 * says which the reader got; a personal row whose shared secret is gone (renamed, moved) is left out.
 */
export const overlayPersonal = (rows: readonly SecretRow[]): SecretRow[] => {
  const out: SecretRow[] = [];
  for (const row of rows) {
    if (row.type !== "personal") out.push(row);
    else {
      const last = out[out.length - 1];
      if (last?.type === "shared" && last.folder_id === row.folder_id && last.key === row.key)
        out[out.length - 1] = row;
    }
  }
  return out;
};

/** The shared secrets of some folders, each overridden by `ownerId`'s personal secret of its key (when given). */
export const listVisibleSecretsOfFolders = async (db: Database, folderIds: readonly string[], ownerId?: string) =>
  ownerId === undefined
    ? listSecretsOfFolders(db, folderIds)
    : overlayPersonal(await listSecretsOfFolders(db, folderIds, ownerId));

/**
 * Opens rows one at a time under a project's key, keeping nothing. Made here, outside any source: it
 * closes over the key alone, so what holds it (a streamed list, until its last byte) does not hold the
 * source's rows too.
 */
const rowOpener = (k: DataKey) => ({
  secret: (row: SecretRow) => openSecretRow(k, row),
  value: (row: SecretRow) => openSecretValue(k, row),
});

export type RowOpener = ReturnType<typeof rowOpener>;

/**
 * The secrets one read request sees, folder by folder: each folder is fetched and decrypted at most
 * once per request (the listed folder, its imports and every folder a reference names), each row opened
 * at most once, with the
 * project's data key taken from the cache. Reads only: nothing here writes.
 */
export const createSecretSource = (
  ctx: Pick<RequestContext, "deps">,
  projectId: string,
  db: Database = ctx.deps.db,
  /** A person whose personal secrets this request reads in place of the shared ones. */
  ownerId?: string,
) => {
  let key: Promise<DataKey | undefined> | undefined;
  const dataKey = () => (key ??= findProjectKey(ctx.deps, projectId, db));
  const folders = new Map<string, Promise<FolderSecrets | undefined>>();
  const memoKey = (environment: string, secretPath: string) => `${environment}\u0000${secretPath}`;

  // A row opened once per request: a folder listed and then named by a reference (or imported and
  // referenced) is neither opened nor decrypted twice. Keyed by the row object, so it lives no longer
  // than the request's rows.
  const openedRows = new WeakMap<SecretRow, PlainSecret>();
  const openWith = (k: DataKey, row: SecretRow) => {
    let secret = openedRows.get(row);
    if (!secret) openedRows.set(row, (secret = openSecretRow(k, row)));
    return secret;
  };
  const requireKey = async () => {
    const k = await dataKey();
    if (!k) throw new Error(`secrets of project ${projectId} have no data key`);
    return k;
  };
  const open = async (rows: readonly SecretRow[]): Promise<PlainSecret[]> => {
    if (rows.length === 0) return [];
    const k = await requireKey();
    return rows.map((row) => openWith(k, row));
  };

  // A folder looked up by references is indexed, not opened: a reference names a few keys of it, and
  // a listed folder of 10,000 secrets would otherwise be held opened for the rest of the request.
  const byKey = async (rows: readonly SecretRow[]): Promise<FolderSecrets> => {
    if (rows.length === 0) return { get: () => undefined };
    const k = await requireKey();
    const index = new Map(rows.map((row) => [row.key, row]));
    return {
      get: (key) => {
        const row = index.get(key);
        return row && openWith(k, row);
      },
    };
  };

  /** Rows already fetched for a folder serve later lookups of it (opened only if one comes). */
  const seeded = new Map<string, readonly SecretRow[]>();
  const seed = (environment: string, secretPath: string, rows: readonly SecretRow[]) =>
    void seeded.set(memoKey(environment, secretPath), rows);

  const load: FolderLoader = (environment, secretPath) => {
    const k = memoKey(environment, secretPath);
    let pending = folders.get(k);
    if (!pending) {
      const rows = seeded.get(k);
      pending = (async () => {
        if (rows) return byKey(rows);
        const place = await resolveFolder(db, projectId, environment, secretPath);
        if (!place?.folder_id) return undefined;
        return byKey(await listVisibleSecretsOfFolders(db, [place.folder_id], ownerId));
      })();
      folders.set(k, pending);
    }
    return pending;
  };

  /**
   * Opens rows its caller lets go as soon as each is used (a streamed list writes 10,000 and keeps
   * none): nothing is kept for later lookups, which open the row again if they come.
   */
  const opener = async () => rowOpener(await requireKey());

  return { open, opener, seed, load, dataKey };
};

export type SecretSource = ReturnType<typeof createSecretSource>;
