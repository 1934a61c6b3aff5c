import { sql, type Kysely } from "kysely";

/** Migrations are lists of single statements: PGlite and pg both run one statement per query. */
export const runStatements = async (db: Kysely<unknown>, statements: readonly string[]) => {
  for (const statement of statements) await sql.raw(statement).execute(db);
};

/** Columns every table carries. */
export const TIMESTAMPS =
  "created_at timestamptz not null default now(), updated_at timestamptz not null default now()";
export const ID = "id uuid primary key default gen_random_uuid()";
