/**
 * A short-lived, bounded in-process cache of authenticated token rows (at most one second old).
 * A revocation seen by this instance clears it at once; other instances see it within a second.
 */
export type TokenCache<T> = {
  get: (key: string) => T | undefined;
  set: (key: string, value: T) => void;
  clear: () => void;
};

export const createTokenCache = <T>(now: () => number, ttlMs = 1_000, maxEntries = 10_000): TokenCache<T> => {
  const entries = new Map<string, { value: T; expiresAt: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value) {
      if (entries.size >= maxEntries) entries.clear();
      entries.set(key, { value, expiresAt: now() + ttlMs });
    },
    clear: () => entries.clear(),
  };
};
