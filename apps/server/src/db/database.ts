import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, Migrator, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from "kysely";
import pg from "pg";
import { PGliteDialect } from "./pglite-dialect";
import { migrationProvider } from "./migrations";
import type { DB } from "./schema";

export type Database = Kysely<DB>;
export type DatabaseKind = "postgres" | "pglite";

export type DatabaseHandle = {
  db: Database;
  kind: DatabaseKind;
  /** True when a trivial query answers; used by the readiness signal. */
  ping: () => Promise<boolean>;
  close: () => Promise<void>;
};

/** int8 comes back as a string on both backends, so counts never silently lose precision. */
const INT8_OID = 20;

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** One process per data directory: take `keyward.lock`, or fail if a live process holds it. */
const lockDataDir = (dir: string): (() => void) => {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "keyward.lock");
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number.parseInt(readFileSync(file, "utf8"), 10);
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new Error(`Data directory ${dir} is in use by process ${holder}`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not lock data directory ${dir}`);
};

/**
 * Prepared statements for pg: Kysely sends the same SQL text for the same query shape, so naming
 * each distinct DML text lets PostgreSQL plan it once per connection instead of on every request
 * (the identity read's plan costs more than its execution). Bounded, because pg keeps a prepared
 * statement for the life of its connection and `in (...)` lists make texts of many lengths.
 */
const MAX_PREPARED_STATEMENTS = 500;
const statementNames = new Map<string, string | null>();
const DML = /^\s*(select|insert|update|delete|with)\b/i;

const statementName = (text: string): string | undefined => {
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED_STATEMENTS) return undefined;
    name = DML.test(text) ? `kw_${createHash("sha1").update(text).digest("hex").slice(0, 24)}` : null;
    statementNames.set(text, name);
  }
  return name ?? undefined;
};

const preparingPool = (pool: pg.Pool): PostgresPool => ({
  connect: async (): Promise<PostgresPoolClient> => {
    const client = await pool.connect();
    const query = (text: string, values: unknown[]) => {
      const name = statementName(text);
      return client.query(name ? { name, text, values } : { text, values });
    };
    return { query: query as unknown as PostgresPoolClient["query"], release: () => client.release() };
  },
  end: () => pool.end(),
});

export type OpenDatabaseOptions = { databaseUrl?: string; dataDir?: string; poolSize?: number };

/**
 * PostgreSQL through pg when a URL is given; otherwise embedded PGlite, file-backed under dataDir
 * (in memory when dataDir is "memory://").
 */
export const openDatabase = async ({
  databaseUrl,
  dataDir,
  poolSize = 10,
}: OpenDatabaseOptions): Promise<DatabaseHandle> => {
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
    pool.on("error", () => undefined);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
    return {
      db,
      kind: "postgres",
      ping: () => pingDb(db),
      close: () => db.destroy(),
    };
  }
  const inMemory = !dataDir || dataDir.startsWith("memory://");
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  try {
    const client = new PGlite(inMemory ? undefined : join(dataDir, "pgdata"), {
      parsers: { [INT8_OID]: (value: string) => value },
    });
    await client.waitReady;
    const db = new Kysely<DB>({ dialect: new PGliteDialect(client) });
    return {
      db,
      kind: "pglite",
      ping: () => pingDb(db),
      close: async () => {
        await db.destroy();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
};

const pingDb = async (db: Database) => {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
};

/** Apply every pending migration; throws with the failing migration's error. */
export const migrateToLatest = async (db: Database) => {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(
      `Migration ${failed?.migrationName ?? "?"} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
    );
  }
};
