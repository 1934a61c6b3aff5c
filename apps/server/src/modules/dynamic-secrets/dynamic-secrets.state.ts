import { createLru, type Lru } from "../../lib/lru";
import type { TargetPool } from "./providers/types";

declare module "../../context" {
  interface AppDeps {
    /** Pooled connections to dynamic-secret targets, per set of root credentials. */
    targetPools: Lru<TargetPool>;
  }
}

export const createDynamicSecretsState = () => ({
  targetPools: createLru<TargetPool>(100, (pool) => void pool.end().catch(() => undefined)),
});
