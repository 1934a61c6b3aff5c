import type { AuthenticatedToken, Clock } from "../../context";
import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";
import { createTokenCache, type TokenCache } from "./token-cache";

declare module "../../context" {
  interface AppDeps {
    /** Authenticated tokens by hash, for at most a second. */
    tokenCache: TokenCache<AuthenticatedToken>;
    /** When this process last wrote each token's last-used time (written at most every 10 s). */
    tokenUseWrites: BoundedCache<number>;
  }
}

export const createAccessTokensState = (clock: Clock) => ({
  tokenCache: createTokenCache<AuthenticatedToken>(clock),
  tokenUseWrites: createBoundedCache<number>({ maxEntries: 50_000 }),
});
