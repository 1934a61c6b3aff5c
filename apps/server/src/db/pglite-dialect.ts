import type { PGlite } from "@electric-sql/pglite";
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from "kysely";

/**
 * PGlite has a single connection. This driver hands it out under a FIFO mutex, so a transaction
 * owns it from BEGIN to COMMIT and concurrent requests queue instead of interleaving statements.
 */
class FifoMutex {
  #tail: Promise<void> = Promise.resolve();

  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const acquired = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => next);
    return acquired;
  }
}

/**
 * PGlite runs in this thread and settles a query in microtasks: a chain of queries (one request's,
 * or the requests already queued on the mutex) never returns to the event loop, so no socket is read
 * until the whole queue drains. Under 32 connections of secret lists that was ~300 ms stretches and
 * a p99 over a second, with some requests past two seconds. After a query, once this long has passed
 * since the last turn we gave, the next one waits for a turn of the event loop: stretches stay near
 * 20 ms, new requests join the FIFO queue in order, and short reads (which rarely chain that long)
 * pay nothing.
 */
const MAX_STRETCH_MS = 20;
let lastTurn = 0;

class PGliteConnection implements DatabaseConnection {
  constructor(
    private readonly pg: PGlite,
    readonly release: () => void,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pg.query<R>(compiled.sql, compiled.parameters as unknown[], { rowMode: "object" });
    if (performance.now() - lastTurn > MAX_STRETCH_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      lastTurn = performance.now();
    }
    return {
      rows: result.rows,
      numAffectedRows: result.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGlite dialect does not stream");
  }
}

class PGliteDriver implements Driver {
  readonly #mutex = new FifoMutex();

  constructor(private readonly pg: PGlite) {}

  async init(): Promise<void> {
    await this.pg.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.#mutex.lock();
    return new PGliteConnection(this.pg, release);
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    await conn.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    (conn as PGliteConnection).release();
  }

  async destroy(): Promise<void> {
    await this.pg.close();
  }
}

export class PGliteDialect implements Dialect {
  constructor(private readonly pg: PGlite) {}

  createAdapter() {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.pg);
  }

  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
