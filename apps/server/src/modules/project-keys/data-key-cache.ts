import type { DataKey } from "../../crypto/data-keys";

/**
 * Unwrapped project data keys, kept for a bounded time and number so a read decrypts without a
 * round trip or an unwrap. Only keys read from committed rows are cached; plaintext values never are.
 */
export type DataKeyCache = {
  get: (projectId: string) => DataKey | undefined;
  set: (projectId: string, key: DataKey) => void;
  delete: (projectId: string) => void;
  clear: () => void;
};

export const createDataKeyCache = ({ ttlMs = 5 * 60_000, max = 10_000 } = {}): DataKeyCache => {
  const entries = new Map<string, { key: DataKey; expiresAt: number }>();
  return {
    get(projectId) {
      const entry = entries.get(projectId);
      if (!entry) return undefined;
      if (Date.now() >= entry.expiresAt) {
        entries.delete(projectId);
        return undefined;
      }
      return entry.key;
    },
    set(projectId, key) {
      entries.delete(projectId);
      if (entries.size >= max) entries.delete(entries.keys().next().value!);
      entries.set(projectId, { key, expiresAt: Date.now() + ttlMs });
    },
    delete: (projectId) => void entries.delete(projectId),
    clear: () => entries.clear(),
  };
};
