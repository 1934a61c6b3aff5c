import { createBoundedCache, type BoundedCache, type CacheClock } from "../../lib/bounded-cache";
import type { OpenMaterial } from "./kms-material";

/**
 * Unwrapped key versions, kept briefly so a hot key is not unwrapped (and, for RSA, parsed) on every
 * request. Keyed by the version row's id, which never changes content: a deleted key's entry is
 * unreachable (its row is gone) and ages out. Held only in memory, never written back anywhere.
 */
export type KmsMaterialCache = Pick<BoundedCache<OpenMaterial>, "get" | "set">;

/** Least recently used evicted first; each version lives `ttlMs` on the injected clock. */
export const createKmsMaterialCache = (clock: CacheClock, { ttlMs = 60_000, max = 1_000 } = {}): KmsMaterialCache =>
  createBoundedCache<OpenMaterial>({ maxEntries: max, ttlMs, clock });
