import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Kysely, Migrator, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from "kysely";
import pg from "pg";
import { PGliteDialect } from "./pglite-dialect";
import { migrationProvider } from "./migrations";
import type { DB } from "./schema";
import type { Logger } from "../lib/logger";
import type { PoolStats } from "../lib/metrics";
import { listenPglite, listenPostgres, type Listen } from "./listen";
import { createDbHealth, isDatabaseUnavailable, type DbHealth } from "./health";

export type Database = Kysely<DB>;
export type DatabaseKind = "postgres" | "pglite";

export type DatabaseHandle = {
  db: Database;
  kind: DatabaseKind;
  /** True when a trivial query answers; used by the readiness signal. */
  ping: () => Promise<boolean>;
  /** The last known state of the database (an outage is logged once, not per request). */
  health: DbHealth;
  /** Follow the database's notices (LISTEN/NOTIFY), on either backend. */
  listen: Listen;
  /** Open, idle and awaited connections of the PostgreSQL pool (undefined on PGlite). */
  poolStats: () => PoolStats | undefined;
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
export const lockDataDir = (dir: string): (() => void) => {
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
 * each distinct DML text lets PostgreSQL parse it once per connection instead of on every request
 * (whether it also keeps the plan is PostgreSQL's choice, see `keepGenericPlan`). Bounded, because
 * pg keeps a prepared statement for the life of its connection and `in (...)` lists make texts of
 * many lengths.
 */
const MAX_PREPARED_STATEMENTS = 500;
const statementNames = new Map<string, string | null>();
const DML = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Statements that begin with this comment are sent unnamed, so PostgreSQL plans each execution
 * with its parameters and never settles on a generic plan: for statements where a parameter's size
 * decides the index (an array of one folder or of a thousand), a generic plan is far slower.
 */
export const PLAN_EACH_TIME = "/* planned each time */";

const statementName = (text: string): string | undefined => {
  if (text.startsWith(PLAN_EACH_TIME)) return undefined;
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED_STATEMENTS) return undefined;
    name = DML.test(text) ? `kw_${createHash("sha1").update(text).digest("hex").slice(0, 24)}` : null;
    statementNames.set(text, name);
  }
  return name ?? undefined;
};

/**
 * Statements of a fixed shape that look rows up by keys (`compiledOnce`, the batched lookups).
 * PostgreSQL's default plan cache re-plans such a statement on every execution: with the keys as an
 * array parameter, a custom plan for the one or few keys at hand always looks cheaper than the
 * generic plan (which assumes ten), so the generic plan is never chosen. Planning the secret get's
 * statement took longer than running it (a round trip of ~450 µs against ~200 µs with the plan
 * kept). These statements run on connections with `plan_cache_mode = force_generic_plan`, planned
 * once per connection; every other statement keeps PostgreSQL's choice, which matters where a
 * parameter decides whether a partial index applies.
 */
const genericPlanTexts = new Set<string>();

/** Run `text` with a plan kept per connection (see above); returns it for use in place. */
export const keepGenericPlan = (text: string) => {
  genericPlanTexts.add(text);
  return text;
};

type Pools = { planned: pg.Pool; generic: pg.Pool };

/**
 * Kysely's connection: a pooled client taken on the first statement, from the pool that statement
 * belongs to (a transaction's first statement is `begin`, so a transaction stays on one planned
 * connection). A client whose query failed because the server could not be reached (or did not
 * answer in time) may be mid-protocol: every later query on it fails at once (so a transaction's
 * rollback does not wait out a second timeout), and it is destroyed on release instead of going
 * back to the pool.
 */
const preparingPool = (pools: Pools, health: DbHealth): PostgresPool => ({
  connect: async (): Promise<PostgresPoolClient> => {
    let client: Promise<pg.PoolClient> | undefined;
    let broken: unknown;
    const checkout = async (pool: pg.Pool) => {
      try {
        return await pool.connect();
      } catch (error) {
        if (isDatabaseUnavailable(error)) health.failed(error);
        throw error;
      }
    };
    const query = async (text: string, values: unknown[]) => {
      if (broken) throw broken;
      client ??= checkout(genericPlanTexts.has(text) ? pools.generic : pools.planned);
      const connection = await client;
      const name = statementName(text);
      try {
        const result = await connection.query(name ? { name, text, values } : { text, values });
        health.succeeded();
        return result;
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          // A statement cancelled by statement_timeout leaves a healthy connection; anything else does not.
          // One slow statement is not an outage either.
          if ((error as { code?: unknown }).code !== "57014") {
            broken = error;
            health.failed(error);
          }
        }
        throw error;
      }
    };
    return {
      query: query as unknown as PostgresPoolClient["query"],
      release: () => {
        const taken = client;
        client = undefined;
        // A checkout that failed has nothing to give back.
        void taken?.then(
          (connection) => connection.release(broken ? (broken as Error) : undefined),
          () => undefined,
        );
      },
    };
  },
  end: async () => {
    await Promise.all([pools.planned.end(), pools.generic.end()]);
  },
});

/**
 * Connections for the generic-plan lookups beside `poolSize` planned ones: half as many, at least one
 * (with fewer, batches queued for a connection under load and the privilege read got slower).
 */
export const genericPoolSize = (poolSize: number) => Math.max(1, Math.ceil(poolSize / 2));

export type OpenDatabaseOptions = {
  databaseUrl?: string;
  dataDir?: string;
  poolSize?: number;
  /** PostgreSQL: how long to wait for a pooled connection (or a new one) before failing. */
  connectTimeoutMs?: number;
  /** PostgreSQL: statement_timeout of every connection, and (one second later) the client's own bound; 0: none. */
  statementTimeoutMs?: number;
  logger?: Logger;
  /**
   * PGlite: a migrated data directory (PGlite's gzipped dump) that a new database starts from instead
   * of running initdb and every migration; ignored when the file does not exist.
   */
  template?: string;
  /** PGlite: the buffer pool's size (`shared_buffers`); PostgreSQL's server sets its own. */
  sharedBuffers?: string;
};

/**
 * PostgreSQL through pg when a URL is given; otherwise embedded PGlite, file-backed under dataDir
 * (in memory when dataDir is "memory://").
 */
export const openDatabase = async ({
  databaseUrl,
  dataDir,
  poolSize = 10,
  connectTimeoutMs = 3_000,
  statementTimeoutMs = 5_000,
  logger,
  template,
  sharedBuffers,
}: OpenDatabaseOptions): Promise<DatabaseHandle> => {
  // PostgreSQL may be down when the process starts: not ready until a statement succeeds.
  const health = createDbHealth(logger, { known: !databaseUrl });
  if (databaseUrl) {
    const settings = {
      connectionString: databaseUrl,
      connectionTimeoutMillis: connectTimeoutMs,
      // Server-side first (a clean cancel); the client's bound catches a server that does not answer at all.
      ...(statementTimeoutMs > 0
        ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + 1_000 }
        : {}),
    };
    const pools: Pools = {
      planned: new pg.Pool({ ...settings, max: poolSize }),
      generic: new pg.Pool({ ...settings, max: genericPoolSize(poolSize) }),
    };
    for (const pool of [pools.planned, pools.generic]) {
      // pg-pool hears an idle connection's failure, but takes its listener off while the connection is
      // lent. A lent one can fail outside a statement too: just connected, between a transaction's
      // statements, or when its result and the server's termination notice (a stop, a terminated
      // backend) arrive in one read, before it is given back. pg reports that as an 'error' event,
      // which unheard ends the process. Its statements fail anyway (503); it is not reused.
      pool.on("error", () => undefined);
      pool.on("connect", (client) => client.on("error", () => undefined));
    }
    pools.generic.on("connect", (client) => {
      // Queued ahead of the statement the connection was taken for; a connection that failed here fails that too.
      client.query("set plan_cache_mode = force_generic_plan").catch(() => undefined);
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pools, health) }) });
    health.setProbe(() => pingDb(db));
    health.refresh();
    return {
      db,
      kind: "postgres",
      listen: listenPostgres(databaseUrl),
      ping: () => pingDb(db),
      health,
      poolStats: () => ({
        total: pools.planned.totalCount + pools.generic.totalCount,
        idle: pools.planned.idleCount + pools.generic.idleCount,
        waiting: pools.planned.waitingCount + pools.generic.waitingCount,
      }),
      close: async () => {
        health.closed();
        await db.destroy();
      },
    };
  }
  const inMemory = !dataDir || dataDir.startsWith("memory://");
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  try {
    // Loaded only here: a process on PostgreSQL never needs the embedded engine in memory.
    const pglite = await import("@electric-sql/pglite");
    const { PGlite } = pglite;
    const pgdata = inMemory ? undefined : resolve(dataDir, "pgdata");
    const fresh = !pgdata || !existsSync(join(pgdata, "PG_VERSION"));
    // A new database starts from the migrated template when there is one; otherwise initdb runs (in
    // WebAssembly, most of a first start) and then every migration.
    const loadDataDir = fresh && template && existsSync(template) ? new Blob([readFileSync(template)]) : undefined;
    if (pgdata && fresh) {
      const how = loadDataDir ? " from the migrated template" : "";
      logger?.info({ dataDir: pgdata }, `creating the database in ${pgdata}${how}`);
    }
    // A data directory must be named for the options to apply ("memory://" for one in memory).
    const client = new PGlite(pgdata ?? "memory://", {
      parsers: { [INT8_OID]: (value: string) => value },
      ...(loadDataDir ? { loadDataDir } : {}),
      // Much of a start from a template is laying out the buffer pool: 16MB starts on about 60% of
      // the CPU of 128MB (PGlite's default), see PGLITE_SHARED_BUFFERS.
      ...(sharedBuffers
        ? { startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`] }
        : {}),
    });
    await client.waitReady;
    const db = new Kysely<DB>({ dialect: new PGliteDialect(client, pglite) });
    return {
      db,
      kind: "pglite",
      ping: () => pingDb(db),
      health,
      listen: listenPglite(client, db),
      poolStats: () => undefined,
      close: async () => {
        health.closed();
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

/**
 * Apply every pending migration; throws with the failing migration's error (as its cause too). With a
 * logger, says how many it applies before it starts (`migrating: N to apply`) and how long they took.
 */
export const migrateToLatest = async (db: Database, logger?: Logger) => {
  const migrator = new Migrator({ db, provider: migrationProvider });
  if (logger) {
    const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).length;
    if (pending > 0) logger.info({ pending }, `migrating: ${pending} to apply`);
  }
  const started = performance.now();
  const { error, results } = await migrator.migrateToLatest();
  const applied = results?.filter((r) => r.status === "Success").length ?? 0;
  if (logger && applied > 0 && !error)
    logger.info({ applied, ms: Math.round(performance.now() - started) }, `migrated: ${applied} applied`);
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(
      `Migration ${failed?.migrationName ?? "?"} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
      { cause: error },
    );
  }
};

export type MigrateOptions = {
  databaseUrl: string;
  connectTimeoutMs: number;
  /** The longest pause between attempts; the first is 250 ms (or this, if shorter), doubling. */
  retryMaxMs: number;
  logger: Logger;
};

/**
 * Apply every pending migration on PostgreSQL, waiting for a database that cannot be reached yet:
 * each failed attempt is logged and the next comes after a pause that doubles up to `retryMaxMs`.
 * Any other failure (a refused login, a migration that fails) is thrown. Kysely runs the migrations
 * in one transaction, so an attempt cut halfway leaves nothing behind.
 */
export const migrateWhenReachable = async ({ databaseUrl, connectTimeoutMs, retryMaxMs, logger }: MigrateOptions) => {
  let pause = Math.min(250, retryMaxMs);
  for (let attempt = 1; ; attempt += 1) {
    // Migrations on a large database may run longer than the statement bound requests get.
    const migrating = await openDatabase({ databaseUrl, poolSize: 1, connectTimeoutMs, statementTimeoutMs: 0 });
    try {
      await migrateToLatest(migrating.db, logger);
      if (attempt > 1) logger.info({ attempt }, "database reachable again: migrated");
      return;
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (!isDatabaseUnavailable(error) && !isDatabaseUnavailable(cause)) throw error;
      const { code, message } = (cause ?? error) as { code?: unknown; message?: unknown };
      logger.warn({ attempt, retryInMs: pause, code, cause: message }, "waiting for the database to migrate it");
    } finally {
      await migrating.close();
    }
    await sleep(pause);
    pause = Math.min(pause * 2, retryMaxMs);
  }
};
