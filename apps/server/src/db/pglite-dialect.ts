import { createRequire } from "node:module";
import type * as PGliteModule from "@electric-sql/pglite";
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

/** The protocol helpers of the PGlite module, handed in by whoever loaded it (a PostgreSQL process never does). */
export type PGliteProtocol = Pick<typeof PGliteModule, "protocol" | "parse">;

/** Parameters become text exactly as node-postgres sends them on the PostgreSQL path (arrays, JSON, dates, bytea). */
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils") as {
  prepareValue: (value: unknown) => string | Uint8Array | null;
};

/** How many named statements a database keeps prepared; past it the least recently used is closed. */
const MAX_PREPARED = 500;

/**
 * The named statements prepared on a PGlite database, by SQL text. A statement with parameters is
 * parsed and planned once and then only bound and executed: PGlite's `query` sends five protocol
 * calls (parse, describe, bind, describe, execute) and plans every time, about four times the CPU.
 * Names are never reused, so a pipeline that failed before its parse completed just forgets its name.
 */
class PreparedStatements {
  readonly #names = new Map<string, string>();
  /** Evicted statements, closed at the start of the next pipeline. */
  #closing: string[] = [];
  #counter = 0;

  constructor(
    private readonly pg: PGlite,
    private readonly protocol: PGliteProtocol,
  ) {}

  async run<R>(text: string, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    const { serialize } = this.protocol.protocol;
    const parts: Uint8Array[] = [];
    const closing = this.#closing;
    this.#closing = [];
    for (const name of closing) parts.push(serialize.close({ type: "S", name }));
    // A statement without parameters (begin, commit, a migration's DDL) goes unnamed.
    let name = parameters.length > 0 ? this.#names.get(text) : "";
    const parsing = name === undefined;
    if (name === undefined) name = `keyward_${++this.#counter}`;
    if (parsing || name === "") parts.push(serialize.parse({ name, text }));
    else {
      // Most recently used last: the first entry is the one to evict.
      this.#names.delete(text);
      this.#names.set(text, name);
    }
    parts.push(
      serialize.bind({ statement: name, values: parameters.map((value) => prepareValue(value)) }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
      serialize.sync(),
    );
    const { messages } = await this.pg.runExclusive(() => this.pg.execProtocol(concat(parts), { throwOnError: false }));
    const closed = messages.filter((message) => message.name === "closeComplete").length;
    this.#closing.push(...closing.slice(closed));
    if (parsing && messages.some((message) => message.name === "parseComplete")) this.#remember(text, name);
    const error = messages.find((message) => message.name === "error");
    if (error) throw error;
    const [result] = this.protocol.parse.parseResults(messages, this.pg.parsers, { rowMode: "object" });
    return {
      rows: (result?.rows ?? []) as R[],
      numAffectedRows: result?.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    };
  }

  #remember(text: string, name: string) {
    this.#names.set(text, name);
    if (this.#names.size <= MAX_PREPARED) return;
    const [oldest, oldestName] = this.#names.entries().next().value as [string, string];
    this.#names.delete(oldest);
    this.#closing.push(oldestName);
  }
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
};

class PGliteConnection implements DatabaseConnection {
  constructor(
    private readonly statements: PreparedStatements,
    readonly release: () => void,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.statements.run<R>(compiled.sql, compiled.parameters);
    if (performance.now() - lastTurn > MAX_STRETCH_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      lastTurn = performance.now();
    }
    return result;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGlite dialect does not stream");
  }
}

class PGliteDriver implements Driver {
  readonly #mutex = new FifoMutex();
  readonly #statements: PreparedStatements;

  constructor(
    private readonly pg: PGlite,
    protocol: PGliteProtocol,
  ) {
    this.#statements = new PreparedStatements(pg, protocol);
  }

  async init(): Promise<void> {
    await this.pg.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.#mutex.lock();
    return new PGliteConnection(this.#statements, release);
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
  constructor(
    private readonly pg: PGlite,
    private readonly protocol: PGliteProtocol,
  ) {}

  createAdapter() {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.pg, this.protocol);
  }

  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
