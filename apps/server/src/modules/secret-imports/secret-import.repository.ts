import type { Tx } from "../../db/transaction";
import { sql } from "kysely";
import type { Database } from "../../db/database";

const IMPORT_COLUMNS = [
  "i.id",
  "i.folder_id",
  "i.import_env",
  "i.import_path",
  "i.position",
  "i.version",
  "i.is_replication",
  "i.is_replication_success",
  "i.replication_status",
  "i.last_replicated",
  "i.is_reserved",
  "i.created_at",
  "i.updated_at",
  "e.name as env_name",
  "e.slug as env_slug",
] as const;

const selectImports = (db: Database) =>
  db.selectFrom("secret_imports as i").innerJoin("environments as e", "e.id", "i.import_env").select(IMPORT_COLUMNS);

export const listImports = (db: Database, folderId: string) =>
  selectImports(db).where("i.folder_id", "=", folderId).orderBy("i.position").execute();

export const findImport = (db: Database, folderId: string, importId: string) =>
  selectImports(db).where("i.folder_id", "=", folderId).where("i.id", "=", importId).executeTakeFirst();

export type SecretImportRow = NonNullable<Awaited<ReturnType<typeof findImport>>>;

export const countImports = async (db: Database, folderId: string) => {
  const row = await db
    .selectFrom("secret_imports")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("folder_id", "=", folderId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
};

export const findImportBySource = (db: Database, folderId: string, importEnv: string, importPath: string) =>
  db
    .selectFrom("secret_imports")
    .select("id")
    .where("folder_id", "=", folderId)
    .where("import_env", "=", importEnv)
    .where("import_path", "=", importPath)
    .executeTakeFirst();

export const insertImport = (
  db: Database,
  values: { folder_id: string; import_env: string; import_path: string; position: number },
) => db.insertInto("secret_imports").values(values).returning("id").executeTakeFirstOrThrow();

/**
 * Move one import from `from` to `to` (both within 1..n): the rows between shift by one toward
 * the gap. The position constraint is deferred, so the transient duplicate never fails.
 */
export const moveImport = async (db: Database, folderId: string, importId: string, from: number, to: number) => {
  if (to > from) {
    await db
      .updateTable("secret_imports")
      .set({ position: sql<number>`position - 1` })
      .where("folder_id", "=", folderId)
      .where("position", ">", from)
      .where("position", "<=", to)
      .execute();
  } else if (to < from) {
    await db
      .updateTable("secret_imports")
      .set({ position: sql<number>`position + 1` })
      .where("folder_id", "=", folderId)
      .where("position", ">=", to)
      .where("position", "<", from)
      .execute();
  }
  await db.updateTable("secret_imports").set({ position: to }).where("id", "=", importId).execute();
};

export const updateImportSource = (
  db: Database,
  importId: string,
  values: { import_env: string; import_path: string },
) =>
  db
    .updateTable("secret_imports")
    .set({ ...values, version: sql<number>`version + 1`, updated_at: new Date() })
    .where("id", "=", importId)
    .execute();

/** Delete and close the gap behind it. */
export const deleteImportRow = async (db: Database, folderId: string, importId: string, position: number) => {
  await db.deleteFrom("secret_imports").where("id", "=", importId).execute();
  await db
    .updateTable("secret_imports")
    .set({ position: sql<number>`position - 1` })
    .where("folder_id", "=", folderId)
    .where("position", ">", position)
    .execute();
};

/**
 * Serialises import writes that can form a cycle across folders of one project: a transaction-level
 * advisory lock keyed by the project id (60 bits of it, so the key fits a signed bigint).
 */
export const lockProjectImports = async (trx: Tx, projectId: string) => {
  const key = BigInt(`0x${projectId.replace(/-/g, "").slice(0, 15)}`).toString();
  await sql`select pg_advisory_xact_lock(${key}::bigint)`.execute(trx);
};

export type ImportEdge = { id: string; env_id: string; path: string; import_env: string; import_path: string };

/** Every import of a project as an edge from its folder (env, path) to its source (env, path). */
export const listProjectImportEdges = async (db: Database, projectId: string): Promise<ImportEdge[]> => {
  const { rows } = await sql<ImportEdge>`
    with recursive paths as (
      select f.id, f.env_id, '/'::text as path
      from secret_folders f join environments e on e.id = f.env_id
      where e.project_id = ${projectId} and f.parent_id is null
      union all
      select c.id, c.env_id, (case when p.path = '/' then '/' || c.name else p.path || '/' || c.name end)::text
      from secret_folders c join paths p on c.parent_id = p.id
    )
    select i.id, p.env_id, p.path, i.import_env, i.import_path
    from secret_imports i join paths p on p.id = i.folder_id`.execute(db);
  return rows;
};

export type ImportLink = {
  folder_id: string;
  position: number;
  import_env: string;
  env_slug: string;
  import_path: string;
  source_folder_id: string | null;
};

/**
 * The (non-replication) imports held by some folders and, in the same statement, those held by the
 * folders they import, and so on while a link is fewer than `depth` imports away from a listed folder;
 * each link once, with its source folder resolved (null when the source path does not exist), by
 * holding folder then position. A level that finds nothing new ends the walk.
 */
export const listImportGraphOfFolders = async (db: Database, folderIds: readonly string[], depth: number) => {
  if (folderIds.length === 0) return [];
  const { rows } = await sql<ImportLink>`
    with recursive graph as (
      select i.folder_id, i.position, i.import_env, i.import_path,
        secret_folder_at(i.import_env, i.import_path) as source_folder_id, 0 as depth
      from secret_imports i
      where i.folder_id = any(${[...folderIds]}::uuid[]) and i.is_replication = false
      union
      select i.folder_id, i.position, i.import_env, i.import_path,
        secret_folder_at(i.import_env, i.import_path), g.depth + 1
      from graph g join secret_imports i on i.folder_id = g.source_folder_id and i.is_replication = false
      where g.depth + 1 < ${depth}
    )
    select distinct on (g.folder_id, g.position, g.import_env, g.import_path)
      g.folder_id, g.position, g.import_env, e.slug as env_slug, g.import_path, g.source_folder_id
    from graph g join environments e on e.id = g.import_env
    order by g.folder_id, g.position, g.import_env, g.import_path`.execute(db);
  return rows;
};

/** The folders whose imports name one of these sources (an environment id and a path). */
export const listImportersOfSources = async (db: Database, sources: readonly { envId: string; path: string }[]) => {
  if (sources.length === 0) return [];
  const { rows } = await sql<{ folder_id: string }>`
    select distinct i.folder_id from secret_imports i
    join unnest(${sources.map((s) => s.envId)}::uuid[], ${sources.map((s) => s.path)}::text[]) as src(env_id, path)
      on i.import_env = src.env_id and i.import_path = src.path
    where i.is_replication = false`.execute(db);
  return rows.map((row) => row.folder_id);
};
