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
  db.insertInto("secret_folders").values({ env_id: envId, parent_id: null, name: "root" }).returning("id").executeTakeFirstOrThrow();

/** "/a/b/" -> ["a", "b"]; "/" -> []. */
export const pathSegments = (path: string) => path.split("/").filter((segment) => segment.length > 0);

/**
 * The folder at a path of an environment (by slug), walking from the root in one recursive query.
 * Undefined when the environment or any segment is missing.
 */
export const findFolderByPath = async (db: Database, projectId: string, environmentSlug: string, path: string) => {
  const segments = pathSegments(path);
  const env = await db
    .selectFrom("environments as e")
    .innerJoin("secret_folders as f", (join) => join.onRef("f.env_id", "=", "e.id").on("f.parent_id", "is", null))
    .select(["e.id as env_id", "e.name as env_name", "e.slug as env_slug", "f.id as root_id"])
    .where("e.project_id", "=", projectId)
    .where("e.slug", "=", environmentSlug)
    .executeTakeFirst();
  if (!env) return undefined;
  let folderId = env.root_id;
  for (const name of segments) {
    const next = await db
      .selectFrom("secret_folders")
      .select("id")
      .where("parent_id", "=", folderId)
      .where("name", "=", name)
      .executeTakeFirst();
    if (!next) return undefined;
    folderId = next.id;
  }
  const folder = await db.selectFrom("secret_folders").select(FOLDER_COLUMNS).where("id", "=", folderId).executeTakeFirstOrThrow();
  return { folder, environment: { id: env.env_id, name: env.env_name, slug: env.env_slug } };
};
