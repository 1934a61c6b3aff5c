import type { Transaction } from "kysely";
import type { Database } from "./database";
import type { DB } from "./schema";
import type { RequestScope } from "../lib/request-scope";

/** A handle that is inside a transaction: lock helpers and multi-statement writes take this type. */
export type Tx = Transaction<DB>;

/** A request's or a job's context (`ChangeContext`): its database, and the scope whose event commits with the change. */
type ChangeTarget = { deps: { db: Database }; scope?: RequestScope };

const pending = new WeakMap<Tx, (() => void)[]>();
const scopes = new WeakMap<Tx, RequestScope>();

/**
 * Run `work` in one transaction. Given a request's (or a job's) context, the change's audit event
 * is written in the same transaction just before it commits (the last statements, so the chain lock
 * is held briefly). Side effects registered with `afterCommit` (cache drops, stream wake-ups) run
 * once it has committed, and never when it rolled back.
 */
export const inTransaction = async <T>(on: Database | ChangeTarget, work: (trx: Tx) => Promise<T>): Promise<T> => {
  const callbacks: (() => void)[] = [];
  const [db, scope] = "deps" in on ? [on.deps.db, on.scope] : [on, undefined];
  const result = await db.transaction().execute(async (trx) => {
    pending.set(trx, callbacks);
    if (scope) scopes.set(trx, scope);
    const value = await work(trx);
    if (scope) await scope.beforeCommit(trx);
    return value;
  });
  for (const callback of callbacks) callback();
  return result;
};

/** The scope a transaction was opened in (a request's or a job's change), if any. */
export const scopeOfTransaction = (trx: Tx): RequestScope | undefined => scopes.get(trx);

/**
 * Defer `callback` until the transaction of `trx` commits. The transaction must have been opened by
 * `inTransaction`; a callback that throws is a programming error and surfaces to the caller.
 */
export const afterCommit = (trx: Tx, callback: () => void) => {
  const callbacks = pending.get(trx);
  if (!callbacks) throw new Error("afterCommit needs a transaction opened by inTransaction");
  callbacks.push(callback);
};
