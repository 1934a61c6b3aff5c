import type { Tx } from "../../db/transaction";
import { sql } from "kysely";
import type { Database } from "../../db/database";

export const FOLDER_COLUMNS = [
  "id",
  "env_id",
  "parent_id",
  "name",
  "description",
  "version",
  "is_reserved",
  "last_secret_modified",
  "created_at",
  "updated_at",
] as const;

/** Every environment has a root folder named `root` (path "/"). */
export const insertRootFolder = (db: Database, envId: string) =>
  db
    .insertInto("secret_folders")
    .values({ env_id: envId, parent_id: null, name: "root" })
    .returning("id")
    .executeTakeFirstOrThrow();

/** "/a/b/" -> ["a", "b"]; "/" -> []. */
export const pathSegments = (path: string) => path.split("/").filter((segment) => segment.length > 0);

/** ["a", "b"] -> "/a/b"; [] -> "/". */
export const joinPath = (segments: readonly string[]) => `/${segments.join("/")}`;

export const findEnvironmentBySlug = (db: Database, projectId: string, slug: string) =>
  db
    .selectFrom("environments")
    .select(["id", "name", "slug", "project_id"])
    .where("project_id", "=", projectId)
    .where("slug", "=", slug)
    .executeTakeFirst();

export const findEnvironmentById = (db: Database, projectId: string, id: string) =>
  db
    .selectFrom("environments")
    .select(["id", "name", "slug", "project_id"])
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();

export const findRootFolder = (db: Database, envId: string) =>
  db
    .selectFrom("secret_folders")
    .select(FOLDER_COLUMNS)
    .where("env_id", "=", envId)
    .where("parent_id", "is", null)
    .executeTakeFirst();

export const findChildFolder = (db: Database, parentId: string, by: { name: string } | { id: string }) =>
  db
    .selectFrom("secret_folders")
    .select(FOLDER_COLUMNS)
    .where("parent_id", "=", parentId)
    .where("is_reserved", "=", false)
    .$if("name" in by, (qb) => qb.where("name", "=", (by as { name: string }).name))
    .$if("id" in by, (qb) => qb.where("id", "=", (by as { id: string }).id))
    .executeTakeFirst();

export type FolderRow = NonNullable<Awaited<ReturnType<typeof findRootFolder>>>;

/**
 * The folder at a path of an environment (by slug), walking from the root.
 * Undefined when the environment or any segment is missing.
 */
export const findFolderByPath = async (db: Database, projectId: string, environmentSlug: string, path: string) => {
  const env = await db
    .selectFrom("environments as e")
    .innerJoin("secret_folders as f", (join) => join.onRef("f.env_id", "=", "e.id").on("f.parent_id", "is", null))
    .select(["e.id as env_id", "e.name as env_name", "e.slug as env_slug", "f.id as root_id"])
    .where("e.project_id", "=", projectId)
    .where("e.slug", "=", environmentSlug)
    .executeTakeFirst();
  if (!env) return undefined;
  const folder = await findFolderInEnv(db, env.root_id, path);
  if (!folder) return undefined;
  return { folder, environment: { id: env.env_id, name: env.env_name, slug: env.env_slug } };
};

/**
 * The folder at a path below a known root folder, in one statement (secret_folder_at walks the
 * segments in SQL): a query per segment would hold PGlite's single connection for hundreds of round
 * trips on a deep path, and every other request queues behind them.
 */
export const findFolderInEnv = (db: Database, rootId: string, path: string) =>
  db
    .selectFrom("secret_folders")
    .select(FOLDER_COLUMNS)
    .where(
      "id",
      "=",
      // A scalar sub-query is evaluated once; the bare call could run for every row of a sequential scan.
      sql<string>`(select secret_folder_at(r.env_id, ${path}) from secret_folders r where r.id = ${rootId})`,
    )
    .executeTakeFirst();

export const insertFolder = (
  db: Database,
  values: { env_id: string; parent_id: string; name: string; description?: string | null },
) =>
  db
    .insertInto("secret_folders")
    .values({ ...values, description: values.description ?? null })
    .returning(FOLDER_COLUMNS)
    .executeTakeFirstOrThrow();

/**
 * Takes the row lock that serialises changes below this folder (creates, imports, moves). NO KEY
 * UPDATE conflicts with itself but not with the key-share locks of inserts that reference the row.
 */
export const lockFolder = (trx: Tx, folderId: string) =>
  trx.selectFrom("secret_folders").select("id").where("id", "=", folderId).forNoKeyUpdate().executeTakeFirst();

/** The folder's row, locked as `lockFolder` locks it; undefined when it is gone. */
export const lockFolderRow = (trx: Tx, folderId: string) =>
  trx
    .selectFrom("secret_folders")
    .select(["id", "env_id"])
    .where("id", "=", folderId)
    .forNoKeyUpdate()
    .executeTakeFirst();

/** Keeps the environment from being deleted until the transaction ends; undefined when it is gone. */
export const lockEnvironmentForKeyShare = (trx: Tx, envId: string) =>
  trx.selectFrom("environments").select("id").where("id", "=", envId).forKeyShare().executeTakeFirst();

export const updateFolderRow = (
  db: Database,
  folderId: string,
  values: { name: string; description?: string | null },
) =>
  db
    .updateTable("secret_folders")
    .set({
      name: values.name,
      ...(values.description !== undefined ? { description: values.description } : {}),
      version: sql<number>`version + 1`,
      updated_at: new Date(),
    })
    .where("id", "=", folderId)
    .returning(FOLDER_COLUMNS)
    .executeTakeFirstOrThrow();

/** Children go with it (parent_id cascades), and so do the imports they hold. */
export const deleteFolderRow = (db: Database, folderId: string) =>
  db.deleteFrom("secret_folders").where("id", "=", folderId).execute();

export const listChildFolders = (db: Database, parentId: string, modifiedSince?: Date) =>
  db
    .selectFrom("secret_folders")
    .select(FOLDER_COLUMNS)
    .where("parent_id", "=", parentId)
    .where("is_reserved", "=", false)
    .$if(modifiedSince !== undefined, (qb) => qb.where("last_secret_modified", ">=", modifiedSince!))
    .orderBy("name")
    .orderBy("id")
    .execute();

type DescendantRow = FolderRow & { path: string };

/** Every folder below one, with its full path, in one recursive query. */
export const listDescendantFolders = async (
  db: Database,
  folderId: string,
  basePath: string,
): Promise<DescendantRow[]> => {
  const prefix = basePath === "/" ? "" : basePath;
  const { rows } = await sql<DescendantRow>`
    with recursive tree as (
      select f.id, (${prefix}::text || '/' || f.name)::text as path
      from secret_folders f where f.parent_id = ${folderId} and f.is_reserved = false
      union all
      select c.id, (t.path || '/' || c.name)::text
      from secret_folders c join tree t on c.parent_id = t.id where c.is_reserved = false
    )
    select f.id, f.env_id, f.parent_id, f.name, f.description, f.version, f.is_reserved,
      f.last_secret_modified, f.created_at, f.updated_at, t.path
    from tree t join secret_folders f on f.id = t.id
    order by t.path`.execute(db);
  return rows;
};

/** A folder with its environment and project (for the read by id), or undefined. */
export const findFolderWithContext = (db: Database, folderId: string) =>
  db
    .selectFrom("secret_folders as f")
    .innerJoin("environments as e", "e.id", "f.env_id")
    .select([
      ...FOLDER_COLUMNS.map((c) => `f.${c}` as const),
      "e.name as env_name",
      "e.slug as env_slug",
      "e.project_id",
    ])
    .where("f.id", "=", folderId)
    .executeTakeFirst();

/** "/a/b" for a folder, from its chain of parents; "/" for a root. */
export const folderPath = async (db: Database, folderId: string) => {
  const { rows } = await sql<{ name: string; is_root: boolean }>`
    with recursive chain as (
      select id, parent_id, name, 0 as depth from secret_folders where id = ${folderId}
      union all
      select p.id, p.parent_id, p.name, c.depth + 1 from secret_folders p join chain c on p.id = c.parent_id
    )
    select name, parent_id is null as is_root from chain order by depth desc`.execute(db);
  if (rows.length === 0) return undefined;
  return joinPath(rows.filter((r) => !r.is_root).map((r) => r.name));
};

export type FolderPlace = { folder_id: string; project_id: string; env_id: string; env_slug: string; path: string };

/** Each folder's project, environment and "/a/b" path, in one statement for several folders. */
export const findFolderPlaces = async (db: Database, folderIds: readonly string[]): Promise<FolderPlace[]> => {
  if (folderIds.length === 0) return [];
  const { rows } = await sql<FolderPlace>`
    with recursive chain as (
      select f.id as folder_id, f.id, f.parent_id, f.name, 0 as depth
      from secret_folders f where f.id = any(${[...folderIds]}::uuid[])
      union all
      select c.folder_id, p.id, p.parent_id, p.name, c.depth + 1
      from secret_folders p join chain c on p.id = c.parent_id
    )
    select f.id as folder_id, e.project_id, e.id as env_id, e.slug as env_slug,
      coalesce((select '/' || string_agg(c.name, '/' order by c.depth desc)
                from chain c where c.folder_id = f.id and c.parent_id is not null), '/') as path
    from secret_folders f join environments e on e.id = f.env_id
    where f.id = any(${[...folderIds]}::uuid[])`.execute(db);
  return rows;
};

/** The live folders among `ids`, with their parent and name. */
export const lockLiveFolders = async (trx: Tx, ids: readonly string[]) => {
  if (ids.length === 0) return new Map<string, { parent_id: string | null; name: string }>();
  const { rows } = await sql<{ id: string; parent_id: string | null; name: string }>`
    select id, parent_id, name from secret_folders where id = any(${[...ids]}::uuid[]) for no key update`.execute(trx);
  return new Map(rows.map((r) => [r.id, r]));
};

/** Brings a folder back under its old id (the triggers record the version and its first commit). */
export const reinsertFolder = (
  trx: Tx,
  version: { folder_id: string; env_id: string; name: string; description: string | null },
  parentId: string,
) =>
  trx
    .insertInto("secret_folders")
    .values({
      id: version.folder_id,
      env_id: version.env_id,
      parent_id: parentId,
      name: version.name,
      description: version.description,
    })
    .execute();

/** Renames a folder back (the trigger records the version). */
export const restoreFolderName = (trx: Tx, folderId: string, version: { name: string; description: string | null }) =>
  trx
    .updateTable("secret_folders")
    .set({
      name: version.name,
      description: version.description,
      version: sql<number>`version + 1`,
      updated_at: new Date(),
    })
    .where("id", "=", folderId)
    .execute();

/** Names the writer of this transaction's folder changes, for the commits the triggers record. */
export const nameFolderWriter = (trx: Tx, actor: { id: string; type: string }) =>
  sql`select set_config('keyward.actor_id', ${actor.id}, true), set_config('keyward.actor_type', ${actor.type}, true)`.execute(
    trx,
  );
