import { Kysely, Migrator, PostgresDialect, type PostgresPool, type PostgresPoolClient } from "kysely";
import pg from "pg";
import { migrationProvider } from "./migrations";
import type { Database } from "./database";
import type { DB } from "./schema";

/**
 * One PostgreSQL session as a Kysely database: every statement runs on the same connection, so a
 * `begin` sent through it holds until its `commit` and everything between (migrations included)
 * is one transaction. For commands that own a session (backup and restore), never for serving.
 * No statement timeout: a whole instance is read or written through it.
 */
export const openPostgresSession = async (
  databaseUrl: string,
): Promise<{ db: Database; close: () => Promise<void> }> => {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A connection lost outside a statement is an 'error' event; the next statement fails with it anyway.
  client.on("error", () => undefined);
  await client.connect();
  const session: PostgresPoolClient = {
    query: client.query.bind(client),
    release: () => undefined,
  };
  const pool: PostgresPool = { connect: async () => session, end: () => client.end() };
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, close: () => db.destroy() };
};

/** The migrations this Keyward knows, in the order they apply. */
export const knownMigrations = async () => Object.keys(await migrationProvider.getMigrations()).sort();

/**
 * Apply the migrations up to `target` (every one when undefined) on a database that is one session
 * already inside a transaction: Kysely's migrator opens no transaction of its own here, so the
 * migrations commit or roll back with the caller's.
 */
export const migrateInSession = async (db: Database, target?: string) => {
  const migrator = new Migrator({ db, provider: migrationProvider, disableTransactions: true });
  const { error, results } = target ? await migrator.migrateTo(target) : await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(
      `Migration ${failed?.migrationName ?? "?"} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
      { cause: error },
    );
  }
};
