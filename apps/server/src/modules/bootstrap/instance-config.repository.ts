import type { Database } from "../../db/database";

/** Whether the instance has been set up: the instance_config row exists. */
export const isInstanceInitialized = async (db: Database) =>
  (await db.selectFrom("instance_config").select("id").executeTakeFirst()) !== undefined;
