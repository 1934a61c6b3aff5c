import type { Database } from "../../db/database";

export const findProjectDataKey = (db: Database, projectId: string) =>
  db
    .selectFrom("project_data_keys")
    .select(["id", "wrapped_key"])
    .where("project_id", "=", projectId)
    .executeTakeFirst();

/** Inserts the key unless the project has one; undefined when another writer's key won. */
export const insertProjectDataKey = (db: Database, projectId: string, wrappedKey: string) =>
  db
    .insertInto("project_data_keys")
    .values({ project_id: projectId, wrapped_key: wrappedKey })
    .onConflict((oc) => oc.column("project_id").doNothing())
    .returning(["id", "wrapped_key"])
    .executeTakeFirst();
