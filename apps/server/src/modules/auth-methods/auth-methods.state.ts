import { createLru, type Lru } from "../../lib/lru";

declare module "../../context" {
  interface AppDeps {
    /** Signing keys fetched for workload logins (JWKS, x509 maps), per URL and trust; entries expire. */
    keySets: Lru<{ document: unknown; fetchedAt: number; refetchedAt?: number }>;
  }
}

export const createAuthMethodsState = () => ({
  keySets: createLru<{ document: unknown; fetchedAt: number; refetchedAt?: number }>(1_000),
});
