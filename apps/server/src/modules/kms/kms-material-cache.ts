import { createLru, type Lru } from "../../lib/lru";
import type { OpenMaterial } from "./kms-material";

/**
 * Unwrapped key versions, kept briefly so a hot key is not unwrapped (and, for RSA, parsed) on every
 * request. Keyed by the version row's id, which never changes content: a deleted key's entry is
 * unreachable (its row is gone) and ages out. Held only in memory, never written back anywhere.
 */
export type KmsMaterialCache = {
  get: (versionId: string, now: number) => OpenMaterial | undefined;
  set: (versionId: string, material: OpenMaterial, now: number) => void;
};

export const createKmsMaterialCache = ({ ttlMs = 60_000, max = 1_000 } = {}): KmsMaterialCache => {
  const entries: Lru<{ material: OpenMaterial; expiresAt: number }> = createLru(max);
  return {
    get(versionId, now) {
      const entry = entries.get(versionId);
      if (!entry) return undefined;
      if (now >= entry.expiresAt) {
        entries.delete(versionId);
        return undefined;
      }
      return entry.material;
    },
    set: (versionId, material, now) => entries.set(versionId, { material, expiresAt: now + ttlMs }),
  };
};
