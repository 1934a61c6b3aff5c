import { createBoundedCache, type CacheClock } from "../../lib/bounded-cache";

/**
 * A short-lived, bounded in-process cache of authenticated token rows (at most one second old).
 * A revocation seen by this instance clears it at once; other instances see it within a second.
 */
export type TokenCache<T> = {
  /**
   * The cached value, or else one lookup shared by every caller that misses while it runs (when an
   * entry expires under load, the requests holding that token wait for one query, not one each).
   * The result is kept when `keep` says so and no `clear` happened while it was being looked up: a
   * lookup that raced a revocation may answer the callers already waiting, but never a later one.
   */
  load: (key: string, lookup: () => Promise<T>, keep: (value: T) => boolean) => Promise<T>;
  clear: () => void;
  /** Entries held (at most the bound), counting any expired one not yet read. */
  size: () => number;
};

export const createTokenCache = <T>(clock: CacheClock, ttlMs = 1_000, maxEntries = 10_000): TokenCache<T> => {
  const entries = createBoundedCache<T>({ maxEntries, ttlMs, clock, recency: "write" });
  const pending = new Map<string, Promise<T>>();
  /** Bumped by `clear`: lookups begun before it neither fill the cache nor serve new callers. */
  let generation = 0;
  return {
    load(key, lookup, keep) {
      const cached = entries.get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      const running = pending.get(key);
      if (running) return running;
      const startedAt = generation;
      const settle = () => {
        if (pending.get(key) === shared) pending.delete(key);
      };
      const shared = lookup().then(
        (value) => {
          settle();
          if (startedAt === generation && keep(value)) entries.set(key, value);
          return value;
        },
        (error: unknown) => {
          settle();
          throw error;
        },
      );
      pending.set(key, shared);
      return shared;
    },
    clear: () => {
      entries.clear();
      pending.clear();
      generation += 1;
    },
    size: () => entries.size(),
  };
};
