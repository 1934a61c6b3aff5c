import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";

/** A document fetched from an identity provider, when, and when it was last fetched again for an unknown key. */
export type ProviderDocument = { document: unknown; fetchedAt: number; refetchedAt?: number };

declare module "../../context" {
  interface AppDeps {
    /**
     * Identity providers' documents (OIDC discovery, JWKS, x509 key maps) per URL and trust, for
     * sign-in and workload logins alike; entries expire (oidc-discovery.ts).
     */
    providerDocuments: BoundedCache<ProviderDocument>;
  }
}

export const createConnectorsState = () => ({
  providerDocuments: createBoundedCache<ProviderDocument>({ maxEntries: 1_000 }),
});
