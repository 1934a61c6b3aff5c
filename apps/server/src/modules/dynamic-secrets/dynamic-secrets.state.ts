import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";
import type { TargetPool } from "./providers/types";

declare module "../../context" {
  interface AppDeps {
    /** Pooled connections to dynamic-secret targets, per set of root credentials. */
    targetPools: BoundedCache<TargetPool>;
  }
}

export const createDynamicSecretsState = () => ({
  targetPools: createBoundedCache<TargetPool>({
    maxEntries: 100,
    onEvict: (pool) => void pool.end().catch(() => undefined),
  }),
});
