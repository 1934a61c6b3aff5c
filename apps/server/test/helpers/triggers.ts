import { sql } from "kysely";
import type { Database } from "../../src/db/database";
import { uniqueName } from "./tenant";

/**
 * A PL/pgSQL row trigger whose body should act on one row only, so the shared test database is not
 * affected elsewhere; dropped by the returned function. Lets a test make PostgreSQL do what a
 * concurrent request would (delete a row mid-request, end a transaction as a deadlock victim).
 */
export const withTrigger = async (db: Database, table: string, timing: string, body: string) => {
  const name = `t_${uniqueName("trigger").replace(/-/g, "_")}`;
  await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${body} end $$`).execute(db);
  await sql.raw(`create trigger ${name} ${timing} on ${table} for each row execute function ${name}()`).execute(db);
  return async () => {
    await sql.raw(`drop trigger ${name} on ${table}`).execute(db);
    await sql.raw(`drop function ${name}()`).execute(db);
  };
};
