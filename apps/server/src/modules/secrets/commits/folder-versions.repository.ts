import { sql, type Selectable } from "kysely";
import type { Database } from "../../../db/database";
import type { SecretFolderVersionsTable } from "../../../db/tables/secrets";
import type { Tx } from "../../../db/transaction";

/** A subfolder's name and description at one version (a deletion is a version). */
export type FolderVersionRow = Omit<Selectable<SecretFolderVersionsTable>, "commit_seq" | "actor_id" | "actor_type">;

const COLUMNS = sql`v.id, v.folder_id, v.env_id, v.parent_id, v.name, v.description, v.version, v.is_deleted, v.created_at`;

/**
 * A folder's subfolders as they were once the commit `seq` was written: each folder's newest version up
 * to that commit, when it lay in this folder and was not a deletion.
 */
export const subfoldersAt = async (db: Database | Tx, parentId: string, seq: string) => {
  const { rows } = await sql<FolderVersionRow>`
    select x.* from (
      select distinct on (v.folder_id) ${COLUMNS} from secret_folder_versions v
      where v.folder_id in (
          select s.folder_id from secret_folder_versions s
          where s.parent_id = ${parentId} and s.commit_seq is not null and s.commit_seq <= ${seq})
        and v.commit_seq is not null and v.commit_seq <= ${seq}
      order by v.folder_id, v.version desc) x
    where x.parent_id = ${parentId} and x.is_deleted = false
    order by x.name`.execute(db);
  return rows;
};

/** The subfolder versions a commit of `parentId` wrote, each with the version before it. */
export const listCommitFolderVersions = async (db: Database, parentId: string, seq: string) => {
  const { rows } = await sql<FolderVersionRow & { before: FolderVersionRow | null }>`
    select ${COLUMNS}, (select row_to_json(p) from secret_folder_versions p
        where p.folder_id = v.folder_id and p.version = v.version - 1) as before
    from secret_folder_versions v
    where v.commit_seq = ${seq} and v.parent_id = ${parentId}
    order by v.name, v.folder_id`.execute(db);
  return rows.map(({ before, ...row }) => ({ row, before: before ?? undefined }));
};

/** A version is an update when the one before it was live under the same parent. */
export const isFolderUpdate = (row: FolderVersionRow, before: FolderVersionRow | undefined) =>
  !row.is_deleted && before !== undefined && !before.is_deleted && before.parent_id === row.parent_id;

/**
 * Records that folders of a re-created parent stay gone: their history still placed them there, alive,
 * since they went with an ancestor. Stamped with the parent's commit of this transaction.
 */
export const recordFolderGone = async (trx: Tx, versions: readonly FolderVersionRow[]) => {
  for (const v of versions)
    await sql`
      insert into secret_folder_versions
        (folder_id, env_id, parent_id, name, description, version, is_deleted, commit_seq, actor_id, actor_type)
      values (${v.folder_id}, ${v.env_id}, ${v.parent_id}, ${v.name}, ${v.description},
        (select max(version) + 1 from secret_folder_versions where folder_id = ${v.folder_id}), true,
        keyward_folder_commit(${v.parent_id}, keyward_commit_actor_id(), keyward_commit_actor_type(), null),
        keyward_commit_actor_id(), keyward_commit_actor_type())`.execute(trx);
};
