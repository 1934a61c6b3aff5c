import { createBoundedCache, type CacheClock } from "../../lib/bounded-cache";

/**
 * How long a looked-up token may be kept: not at all (a token with a use limit is spent in the
 * database on every use), for a second, or until the database says something it depends on
 * changed — which only holds while this process hears the database's notices; otherwise a second.
 */
export type TokenKeep = "never" | "second" | "until-changed";

/**
 * A bounded in-process cache of authenticated token rows. A change seen by this instance drops what
 * it touched at once; other instances drop theirs on the database's notice of it (or, while they do
 * not hear notices, their entries are at most a second old).
 */
export type TokenCache<T> = {
  /**
   * The cached value, or else one lookup shared by every caller that misses while it runs (when an
   * entry expires under load, the requests holding that token wait for one query, not one each).
   * The result is kept as `keep` says, unless a `clear` happened while it was being looked up: a
   * lookup that raced a change may answer the callers already waiting, but never a later one.
   */
  load: (key: string, lookup: () => Promise<T>, keep: (value: T) => TokenKeep) => Promise<T>;
  /** Drop every entry. */
  clear: () => void;
  /** Drop one entry (a change to that token alone). */
  forget: (key: string) => void;
  /**
   * Whether the database's notices of changes are heard (from now on). Either way every entry is
   * dropped: entries kept on the strength of notices may have missed one.
   */
  follow: (listening: boolean) => void;
  /** Whether notices are heard (entries are kept until changed). */
  following: () => boolean;
  /** Entries held (at most the bound), counting any expired one not yet read. */
  size: () => number;
};

export type TokenCacheOptions = {
  /** Lifetime of an entry kept for a second (or kept until changed while notices are not heard). */
  shortTtlMs?: number;
  /** Lifetime of an entry kept until changed: a bound for a change that sends no notice. */
  followedTtlMs?: number;
  maxEntries?: number;
};

export const createTokenCache = <T>(
  clock: CacheClock,
  { shortTtlMs = 1_000, followedTtlMs = 300_000, maxEntries = 10_000 }: TokenCacheOptions = {},
): TokenCache<T> => {
  const entries = createBoundedCache<T>({ maxEntries, ttlMs: shortTtlMs, clock, recency: "write" });
  const pending = new Map<string, Promise<T>>();
  /** Bumped by `clear`: lookups begun before it neither fill the cache nor serve new callers. */
  let generation = 0;
  let following = false;
  const clear = () => {
    entries.clear();
    pending.clear();
    generation += 1;
  };
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
          const kept = keep(value);
          if (startedAt === generation && kept !== "never") {
            entries.set(key, value, kept === "until-changed" && following ? followedTtlMs : shortTtlMs);
          }
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
    clear,
    forget(key) {
      entries.delete(key);
      pending.delete(key);
      // Coarse but safe: no lookup begun before this (of this token or another) fills the cache.
      generation += 1;
    },
    follow(listening) {
      following = listening;
      clear();
    },
    following: () => following,
    size: () => entries.size(),
  };
};
