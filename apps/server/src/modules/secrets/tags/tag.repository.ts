import type { Database } from "../../../db/database";

const TAG_COLUMNS = ["id", "project_id", "slug", "color", "created_at", "updated_at"] as const;

export const listTags = (db: Database, projectId: string) =>
  db.selectFrom("secret_tags").select(TAG_COLUMNS).where("project_id", "=", projectId).orderBy("slug").execute();

export const findTag = (db: Database, projectId: string, by: { id: string } | { slug: string }) =>
  db
    .selectFrom("secret_tags")
    .select(TAG_COLUMNS)
    .where("project_id", "=", projectId)
    .$if("id" in by, (qb) => qb.where("id", "=", (by as { id: string }).id))
    .$if("slug" in by, (qb) => qb.where("slug", "=", (by as { slug: string }).slug))
    .executeTakeFirst();

export type TagRow = NonNullable<Awaited<ReturnType<typeof findTag>>>;

export const findTagsByIds = (db: Database, projectId: string, ids: readonly string[]) =>
  ids.length === 0
    ? Promise.resolve([] as TagRow[])
    : db
        .selectFrom("secret_tags")
        .select(TAG_COLUMNS)
        .where("project_id", "=", projectId)
        .where("id", "in", [...ids])
        .execute();

export const insertTag = (db: Database, values: { project_id: string; slug: string; color: string }) =>
  db.insertInto("secret_tags").values(values).returning(TAG_COLUMNS).executeTakeFirstOrThrow();

export const updateTag = (db: Database, id: string, values: { slug?: string; color?: string }) =>
  db
    .updateTable("secret_tags")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", id)
    .returning(TAG_COLUMNS)
    .executeTakeFirst();

export const deleteTag = (db: Database, id: string) =>
  db.deleteFrom("secret_tags").where("id", "=", id).returning(TAG_COLUMNS).executeTakeFirst();
