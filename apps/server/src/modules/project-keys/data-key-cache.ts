import type { DataKey } from "../../crypto/data-keys";
import { createBoundedCache, type BoundedCache, type CacheClock } from "../../lib/bounded-cache";

/**
 * Unwrapped project data keys, kept for a bounded time and number so a read decrypts without a
 * round trip or an unwrap. Only keys read from committed rows are cached; plaintext values never are.
 */
export type DataKeyCache = Pick<BoundedCache<DataKey>, "get" | "set" | "delete" | "clear">;

/** Least recently written evicted first; each key lives `ttlMs` on the injected clock. */
export const createDataKeyCache = (clock: CacheClock, { ttlMs = 5 * 60_000, max = 10_000 } = {}): DataKeyCache =>
  createBoundedCache<DataKey>({ maxEntries: max, ttlMs, clock, recency: "write" });
