import type { Database } from "./database";

type Pending<R> = {
  promise: Promise<R | undefined>;
  resolve: (row: R | undefined) => void;
  reject: (error: unknown) => void;
};

/**
 * Lookups by key made within one turn of the event loop go to the database as a single query.
 *
 * Under load one turn handles many requests (every socket that became readable at once); each
 * reaches its lookup synchronously or in microtasks, and the batch is sent from `setImmediate`,
 * after the turn's I/O callbacks. One round trip then serves them all, which on a busy server
 * costs far less than a round trip each. Freshness is unchanged: a lookup is sent only after its
 * request arrived, so it sees every write committed before that request was made.
 *
 * The same key within a batch is fetched once. A failed query rejects every lookup of its batch.
 * `load` receives distinct keys (at most `maxBatch`) and returns the rows found, in any order.
 */
export const batchedLookup = <R>(
  load: (db: Database, keys: string[]) => Promise<readonly R[]>,
  keyOf: (row: R) => string,
  maxBatch = 256,
) => {
  const open = new WeakMap<Database, Map<string, Pending<R>>>();

  const send = (db: Database, batch: Map<string, Pending<R>>) => {
    if (open.get(db) === batch) open.delete(db);
    load(db, [...batch.keys()]).then(
      (rows) => {
        const found = new Map<string, R>();
        for (const row of rows) found.set(keyOf(row), row);
        for (const [key, pending] of batch) pending.resolve(found.get(key));
      },
      (error: unknown) => {
        for (const pending of batch.values()) pending.reject(error);
      },
    );
  };

  return (db: Database, key: string): Promise<R | undefined> => {
    let batch = open.get(db);
    if (!batch) {
      const created = new Map<string, Pending<R>>();
      open.set(db, created);
      setImmediate(() => {
        if (open.get(db) === created) send(db, created);
      });
      batch = created;
    }
    const existing = batch.get(key);
    if (existing) return existing.promise;
    let resolve!: Pending<R>["resolve"];
    let reject!: Pending<R>["reject"];
    const promise = new Promise<R | undefined>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    batch.set(key, { promise, resolve, reject });
    if (batch.size >= maxBatch) send(db, batch);
    return promise;
  };
};
