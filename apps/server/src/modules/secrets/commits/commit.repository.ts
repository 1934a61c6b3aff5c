import { sql } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";
import { isUuid } from "../../../db/errors";
import { VERSION_COLUMNS, type VersionRow } from "../versions/version.repository";

/** A folder commit with its folder's environment and what it changed. */
export type CommitRow = {
  id: string;
  seq: string;
  folder_id: string;
  env_id: string;
  /** The folder's parent (null for an environment's root). */
  parent_id: string | null;
  actor_id: string | null;
  actor_type: string | null;
  message: string | null;
  created_at: Date | string;
  adds: number;
  updates: number;
  deletes: number;
  /** Subfolders added, renamed and deleted. */
  folder_adds: number;
  folder_updates: number;
  folder_deletes: number;
};

/** A commit's change counts: a version is an update when the one before it was live in the same folder. */
const COMMIT_COLUMNS = sql`c.id, c.seq, c.folder_id, f.env_id, f.parent_id, c.actor_id, c.actor_type, c.message, c.created_at,
  coalesce(n.adds, 0)::int as adds, coalesce(n.updates, 0)::int as updates, coalesce(n.deletes, 0)::int as deletes,
  coalesce(d.adds, 0)::int as folder_adds, coalesce(d.updates, 0)::int as folder_updates,
  coalesce(d.deletes, 0)::int as folder_deletes`;

const COUNTS = sql`left join lateral (
    select count(*) filter (where not v.is_deleted and not coalesce(p.live, false)) as adds,
      count(*) filter (where not v.is_deleted and coalesce(p.live, false)) as updates,
      count(*) filter (where v.is_deleted) as deletes
    from secret_versions v
    left join lateral (
      select not p.is_deleted and p.folder_id = v.folder_id as live from secret_versions p
      where p.secret_id = v.secret_id and p.version = v.version - 1) p on true
    where v.commit_seq = c.seq) n on true
  left join lateral (
    select count(*) filter (where not v.is_deleted and not coalesce(p.live, false)) as adds,
      count(*) filter (where not v.is_deleted and coalesce(p.live, false)) as updates,
      count(*) filter (where v.is_deleted) as deletes
    from secret_folder_versions v
    left join lateral (
      select not p.is_deleted and p.parent_id = v.parent_id as live from secret_folder_versions p
      where p.folder_id = v.folder_id and p.version = v.version - 1) p on true
    where v.commit_seq = c.seq and v.parent_id = c.folder_id) d on true`;

export const findCommit = async (db: Database, id: string) => {
  if (!isUuid(id)) return undefined;
  const { rows } = await sql<CommitRow>`
    select ${COMMIT_COLUMNS} from folder_commits c join secret_folders f on f.id = c.folder_id ${COUNTS}
    where c.id = ${id}`.execute(db);
  return rows[0];
};

/** The newest commit of a folder. */
export const findLatestCommit = async (db: Database | Tx, folderId: string) => {
  const { rows } = await sql<{ id: string; seq: string }>`
    select id, seq from folder_commits where folder_id = ${folderId} order by seq desc limit 1`.execute(db);
  return rows[0];
};

/** The commit of a folder just before `seq`. */
export const findPreviousCommit = async (db: Database, folderId: string, seq: string) => {
  const { rows } = await sql<{ id: string; seq: string }>`
    select id, seq from folder_commits where folder_id = ${folderId} and seq < ${seq}
    order by seq desc limit 1`.execute(db);
  return rows[0];
};

/**
 * The last moment a folder was as commit `seq` left it: just before its next commit (its newest
 * commit's `seq` when there is none after).
 */
export const lastMomentOf = async (db: Database, folderId: string, seq: string) => {
  const { rows } = await sql<{ seq: string }>`
    select coalesce((select min(seq) - 1 from folder_commits where folder_id = ${folderId} and seq > ${seq}),
      (select max(seq) from folder_commits where folder_id = ${folderId}))::text as seq`.execute(db);
  return rows[0]?.seq ?? seq;
};

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A search matches the commit's message or the name of a secret or subfolder it changed. */
const searchFilter = (search: string | undefined) => {
  if (!search) return sql`true`;
  const pattern = `%${escapeLike(search)}%`;
  return sql`(c.message ilike ${pattern} or exists (
    select 1 from secret_versions s where s.commit_seq = c.seq and s.key ilike ${pattern}) or exists (
    select 1 from secret_folder_versions s where s.commit_seq = c.seq and s.parent_id = c.folder_id
      and s.name ilike ${pattern}))`;
};

export const countCommits = async (db: Database, folderId: string, search?: string) => {
  const { rows } = await sql<{ count: string }>`
    select count(*) as count from folder_commits c
    where c.folder_id = ${folderId} and ${searchFilter(search)}`.execute(db);
  return Number(rows[0]?.count ?? 0);
};

export const listCommits = async (
  db: Database,
  folderId: string,
  page: { offset: number; limit: number; sort: "asc" | "desc"; search?: string },
) => {
  const order = page.sort === "asc" ? sql`c.seq asc` : sql`c.seq desc`;
  const { rows } = await sql<CommitRow>`
    select ${COMMIT_COLUMNS} from folder_commits c join secret_folders f on f.id = c.folder_id ${COUNTS}
    where c.folder_id = ${folderId} and ${searchFilter(page.search)}
    order by ${order} offset ${page.offset} limit ${page.limit}`.execute(db);
  return rows;
};

/** The versions a commit wrote, each with the version before it (undefined for a secret's first). */
export const listCommitVersions = async (db: Database, seq: string) => {
  const { rows } = await sql<VersionRow>`
    select ${VERSION_COLUMNS} from secret_versions v where v.commit_seq = ${seq} order by v.key, v.secret_id`.execute(
    db,
  );
  const { rows: previous } = await sql<VersionRow>`
    select ${VERSION_COLUMNS} from secret_versions v
    where (v.secret_id, v.version) in (select c.secret_id, c.version - 1 from secret_versions c where c.commit_seq = ${seq})`.execute(
    db,
  );
  const before = new Map(previous.map((p) => [p.secret_id, p]));
  return rows.map((row) => ({ row, before: before.get(row.secret_id) }));
};

/**
 * A folder's shared secrets as they were once the commit `seq` was written: each secret's newest version
 * up to that commit, when it lay in this folder and was not a deletion.
 */
export const folderStateAt = async (db: Database | Tx, folderId: string, seq: string) => {
  const { rows } = await sql<VersionRow>`
    select x.* from (
      select distinct on (v.secret_id) ${VERSION_COLUMNS} from secret_versions v
      where v.secret_id in (
          select s.secret_id from secret_versions s
          where s.folder_id = ${folderId} and s.commit_seq is not null and s.commit_seq <= ${seq})
        and v.commit_seq is not null and v.commit_seq <= ${seq}
      order by v.secret_id, v.version desc) x
    where x.folder_id = ${folderId} and x.is_deleted = false
    order by x.key`.execute(db);
  return rows;
};

/** Names the commit a rollback's transaction writes (the database records it on the first version). */
export const nameNextCommit = (trx: Tx, message: string) =>
  sql`select set_config('keyward.commit_message', ${message}, true)`.execute(trx);

/** The commits the current transaction wrote, by folder. */
export const commitsOfThisTransaction = async (trx: Tx) => {
  const { rows } = await sql<{ id: string; folder_id: string }>`
    select id, folder_id from folder_commits
    where tx_key = nullif(current_setting('keyward.commit_tx', true), '')`.execute(trx);
  return rows;
};

/** The newest recorded version number of each secret (a deleted one's too). */
export const lastVersionNumbers = async (trx: Tx, ids: readonly string[]) => {
  if (ids.length === 0) return new Map<string, number>();
  const { rows } = await sql<{ secret_id: string; version: number }>`
    select secret_id, max(version)::int as version from secret_versions
    where secret_id = any(${[...ids]}::uuid[]) group by secret_id`.execute(trx);
  return new Map(rows.map((r) => [r.secret_id, r.version]));
};
