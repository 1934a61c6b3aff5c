import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, Migrator, PostgresDialect, sql } from "kysely";
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

export type OpenDatabaseOptions = { databaseUrl?: string; dataDir?: string; poolSize?: number };

/**
 * PostgreSQL through pg when a URL is given; otherwise embedded PGlite, file-backed under dataDir
 * (in memory when dataDir is "memory://").
 */
export const openDatabase = async ({ databaseUrl, dataDir, poolSize = 10 }: OpenDatabaseOptions): Promise<DatabaseHandle> => {
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
    pool.on("error", () => undefined);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
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
    throw new Error(`Migration ${failed?.migrationName ?? "?"} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
  }
};
