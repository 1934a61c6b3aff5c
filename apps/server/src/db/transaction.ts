import type { Transaction } from "kysely";
import type { Database } from "./database";
import type { DB } from "./schema";
import { isTransientConflict } from "./errors";

/** A handle that is inside a transaction: lock helpers and multi-statement writes take this type. */
export type Tx = Transaction<DB>;

/**
 * What a change carries to the transaction that commits it, seen from the database: something to
 * write just before COMMIT (a request's audit event, or a background job's platform event). It travels explicitly, in the request's context (`ctx.scope`),
 * never through AsyncLocalStorage: with Node 20, an AsyncLocalStorage once used keeps async hooks on
 * for every promise of the process, about a tenth of a hot read's CPU.
 */
export interface CommitScope {
  beforeCommit(trx: Tx): Promise<void>;
}

/** A request's or a job's context (`ChangeContext`): its database, and the scope whose event commits with the change. */
type ChangeTarget = { deps: { db: Database }; scope?: CommitScope };

const pending = new WeakMap<Tx, (() => void)[]>();
const closing = new WeakMap<Tx, ((trx: Tx) => Promise<void>)[]>();
const scopes = new WeakMap<Tx, CommitScope>();

/** Transactions PostgreSQL aborted for a deadlock or a serialization failure run again, this many times at most. */
export const CONFLICT_RETRIES = 3;
/** Upper bound of the first retry's random wait; it doubles for each further retry. */
const RETRY_BACKOFF_MS = 10;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Run `work` in one transaction. Given a request's (or a job's) context, the change's audit event
 * is written in the same transaction just before it commits (the last statements, so the chain lock
 * is held briefly). Side effects registered with `afterCommit` (cache drops, stream wake-ups) run
 * once it has committed, and never when it rolled back.
 *
 * A transaction PostgreSQL rolled back as the victim of a deadlock (or a serialization failure)
 * runs again from the start, up to CONFLICT_RETRIES times after a short random wait: nothing of it
 * was written, and a valid change must not fail because another ran beside it. So `work` runs once
 * per attempt and must do nothing outside the transaction but note things (the audit event's
 * details) and register `afterCommit` callbacks; the callbacks of a rolled-back attempt are dropped.
 */
export const inTransaction = async <T>(on: Database | ChangeTarget, work: (trx: Tx) => Promise<T>): Promise<T> => {
  const [db, scope] = "deps" in on ? [on.deps.db, on.scope] : [on, undefined];
  for (let retry = 0; ; retry += 1) {
    const callbacks: (() => void)[] = [];
    let result: T;
    try {
      result = await db.transaction().execute(async (trx) => {
        const closers: ((trx: Tx) => Promise<void>)[] = [];
        pending.set(trx, callbacks);
        closing.set(trx, closers);
        if (scope) scopes.set(trx, scope);
        const value = await work(trx);
        for (const close of closers) await close(trx);
        if (scope) await scope.beforeCommit(trx);
        return value;
      });
    } catch (error) {
      if (retry >= CONFLICT_RETRIES || !isTransientConflict(error)) throw error;
      await pause(Math.random() * RETRY_BACKOFF_MS * 2 ** retry);
      continue;
    }
    for (const callback of callbacks) callback();
    return result;
  }
};

/** The signal that ends a transaction run only to prove its work would apply. */
class RolledBack extends Error {}

/**
 * Runs `work` in a transaction that is always rolled back: the proof that a change would apply now,
 * without making it (nothing of it is kept, its `afterCommit` callbacks are dropped). Its errors reach
 * the caller.
 */
export const inRolledBackTransaction = (db: Database, work: (trx: Tx) => Promise<unknown>) =>
  inTransaction(db, async (trx) => {
    await work(trx);
    throw new RolledBack();
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error;
  });

/** The scope a transaction was opened in (a request's or a job's change), if any. */
export const scopeOfTransaction = (trx: Tx): CommitScope | undefined => scopes.get(trx);

/**
 * Run `close` as the transaction's work ends, before its audit event and COMMIT: for rows that sum
 * up the whole change (the events stream's log), written once however many steps noted it. It runs
 * inside the transaction; an error rolls the change back.
 */
export const beforeCommit = (trx: Tx, close: (trx: Tx) => Promise<void>) => {
  const closers = closing.get(trx);
  if (!closers) throw new Error("beforeCommit needs a transaction opened by inTransaction");
  closers.push(close);
};

const collected = new WeakMap<Tx, Map<object, unknown[]>>();

/**
 * Gather items under `key` for the whole transaction and hand them, once, to `flush` before it
 * commits (see `beforeCommit`): many steps of one change note things, one statement records them.
 */
export const collectBeforeCommit = <T>(
  trx: Tx,
  key: object,
  item: T,
  flush: (trx: Tx, items: T[]) => Promise<void>,
) => {
  let byKey = collected.get(trx);
  if (!byKey) collected.set(trx, (byKey = new Map<object, unknown[]>()));
  const items = byKey.get(key) as T[] | undefined;
  if (items) return void items.push(item);
  const list = [item];
  byKey.set(key, list);
  beforeCommit(trx, (inner) => flush(inner, list));
};

/**
 * Defer `callback` until the transaction of `trx` commits. The transaction must have been opened by
 * `inTransaction`; a callback that throws is a programming error and surfaces to the caller.
 */
export const afterCommit = (trx: Tx, callback: () => void) => {
  const callbacks = pending.get(trx);
  if (!callbacks) throw new Error("afterCommit needs a transaction opened by inTransaction");
  callbacks.push(callback);
};
