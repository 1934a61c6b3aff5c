import { createBoundedCache, type BoundedCache } from "./bounded-cache";

/** The bounded cache under its earlier name, least recently used evicted first, with no lifetime. */
export type Lru<V> = BoundedCache<V>;

export const createLru = <V>(maxEntries: number, onEvict?: (value: V) => void): Lru<V> =>
  createBoundedCache<V>({ maxEntries, onEvict });
