import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";

declare module "../../context" {
  interface AppDeps {
    /** Signing keys fetched for workload logins (JWKS, x509 maps), per URL and trust; entries expire. */
    keySets: BoundedCache<{ document: unknown; fetchedAt: number; refetchedAt?: number }>;
  }
}

export const createAuthMethodsState = () => ({
  keySets: createBoundedCache<{ document: unknown; fetchedAt: number; refetchedAt?: number }>({ maxEntries: 1_000 }),
});
