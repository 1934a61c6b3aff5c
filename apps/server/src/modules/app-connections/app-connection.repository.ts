import { sql, type Insertable, type Updateable } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { AppConnectionsTable } from "../../db/tables/rotation";

/** A connection row by id (the caller checks the organization). */
export const findConnectionRow = (db: Database, id: string) =>
  db.selectFrom("app_connections").selectAll().where("id", "=", id).executeTakeFirst();

/** An organization's connections (`projectId` null) or one project's, of one app or all, by name. */
export const listConnectionRows = (db: Database, orgId: string, projectId: string | null, app?: string) => {
  let query = db.selectFrom("app_connections").selectAll().where("org_id", "=", orgId);
  query = projectId === null ? query.where("project_id", "is", null) : query.where("project_id", "=", projectId);
  if (app) query = query.where("app", "=", app);
  return query.orderBy(sql`lower(name)`).execute();
};

export const findConnectionByName = (
  db: Database,
  orgId: string,
  projectId: string | null,
  app: string,
  name: string,
) => {
  let query = db
    .selectFrom("app_connections")
    .selectAll()
    .where("org_id", "=", orgId)
    .where("app", "=", app)
    .where("name", "=", name);
  query = projectId === null ? query.where("project_id", "is", null) : query.where("project_id", "=", projectId);
  return query.executeTakeFirst();
};

export const insertConnectionRow = (trx: Tx, row: Insertable<AppConnectionsTable>) =>
  trx.insertInto("app_connections").values(row).returningAll().executeTakeFirstOrThrow();

export const updateConnectionRow = (trx: Tx, id: string, values: Updateable<AppConnectionsTable>) =>
  trx
    .updateTable("app_connections")
    .set({ ...values, version: sql`version + 1`, updated_at: sql`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();

export const lockConnectionRow = (trx: Tx, id: string) =>
  trx.selectFrom("app_connections").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();

export const deleteConnectionRow = (trx: Tx, id: string) =>
  trx.deleteFrom("app_connections").where("id", "=", id).execute();
