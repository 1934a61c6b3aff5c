/** What a cache with a lifetime reads the time from (milliseconds); `AppDeps.clock` is one. */
export type CacheClock = { readonly now: () => number };

/**
 * Which entry goes first when the cache is full: `"use"` evicts the least recently used (a hit
 * makes an entry the newest), `"write"` the least recently written (a hit moves nothing, so a
 * read on a hot path costs one map lookup).
 */
export type CacheRecency = "use" | "write";

export type BoundedCacheOptions<V> = {
  /**
   * The most entries held: setting a new key into a full cache first evicts the oldest sixty-fourth of
   * its entries (at least one).
   */
  maxEntries: number;
  recency?: CacheRecency;
  /** Called with each value the cache drops by itself (evicted for room, expired, or cleared); not
   *  with a value the caller deletes or overwrites. */
  onEvict?: (value: V) => void;
} & (
  | { ttlMs?: undefined; clock?: undefined }
  /** Each entry lives `ttlMs` from when it was set; from then on `get` misses and drops it. */
  | { ttlMs: number; clock: CacheClock }
);

export type BoundedCache<V> = {
  get: (key: string) => V | undefined;
  /** Keep `value` under `key`; with a lifetime, `ttlMs` overrides the cache's for this entry. */
  set: (key: string, value: V, ttlMs?: number) => void;
  delete: (key: string) => void;
  /** Entries held, counting any expired one not yet read. */
  size: () => number;
  /** Drop every entry, releasing each through `onEvict`. */
  clear: () => void;
};

/**
 * What a cache with a lifetime holds per key. A cache without one holds the value itself: at 100,000
 * cached tokens a wrapper object and its boxed `expiresAt` were ~56 bytes per entry for nothing.
 */
type Entry<V> = { value: V; expiresAt: number };

const noEvict = () => undefined;

class Cache<V> implements BoundedCache<V> {
  private readonly entries = new Map<string, V | Entry<V>>();
  private readonly maxEntries: number;
  private readonly evictCount: number;
  private readonly touchOnGet: boolean;
  private readonly onEvict: (value: V) => void;
  private readonly ttlMs: number | undefined;
  private readonly clock: CacheClock | undefined;

  constructor(options: BoundedCacheOptions<V>) {
    if (!(options.maxEntries >= 1)) throw new RangeError("a bounded cache holds at least one entry");
    this.maxEntries = options.maxEntries;
    this.evictCount = Math.max(1, Math.floor(options.maxEntries / 64));
    this.touchOnGet = (options.recency ?? "use") === "use";
    this.onEvict = options.onEvict ?? noEvict;
    this.ttlMs = options.ttlMs;
    this.clock = options.clock;
  }

  get(key: string): V | undefined {
    const stored = this.entries.get(key);
    if (stored === undefined) return undefined;
    if (this.clock !== undefined && this.clock.now() >= (stored as Entry<V>).expiresAt) {
      this.entries.delete(key);
      this.onEvict((stored as Entry<V>).value);
      return undefined;
    }
    if (this.touchOnGet) {
      this.entries.delete(key);
      this.entries.set(key, stored);
    }
    return this.valueOf(stored);
  }

  set(key: string, value: V, ttlMs = this.ttlMs): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.evictOldest();
    this.entries.set(key, this.clock === undefined ? value : { value, expiresAt: this.clock.now() + ttlMs! });
  }

  private valueOf(stored: V | Entry<V>): V {
    return this.clock === undefined ? (stored as V) : (stored as Entry<V>).value;
  }

  /**
   * Evicts the oldest `evictCount` entries in one pass. A Map keeps a deleted entry's slot until it
   * next rehashes, and iteration starts at the oldest slot: evicting one entry per set made each set
   * step over every slot evicted since that rehash (8 µs per set at 10,000 entries, 50 µs at
   * 200,000). One pass per sixty-fourth steps over them once.
   */
  private evictOldest(): void {
    let left = this.evictCount;
    for (const [key, stored] of this.entries) {
      this.entries.delete(key);
      this.onEvict(this.valueOf(stored));
      if (--left === 0) break;
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  size(): number {
    return this.entries.size;
  }

  clear(): void {
    if (this.onEvict !== noEvict) for (const stored of this.entries.values()) this.onEvict(this.valueOf(stored));
    this.entries.clear();
  }
}

/**
 * A map bounded by a number of entries and, optionally, by a lifetime measured on an injected
 * clock. The one in-process cache of the server: each module's cache is one of these, built in its
 * `create…State()` so every app gets a fresh one. A get allocates nothing.
 */
export const createBoundedCache = <V>(options: BoundedCacheOptions<V>): BoundedCache<V> => new Cache(options);
