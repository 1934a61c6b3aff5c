import type { Database } from "../../db/database";

/** A connection row by id (the caller checks the organization). */
export const findConnectionRow = (db: Database, id: string) =>
  db.selectFrom("app_connections").selectAll().where("id", "=", id).executeTakeFirst();
