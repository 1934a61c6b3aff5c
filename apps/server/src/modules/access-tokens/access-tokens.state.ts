import type { AuthenticatedToken, Clock } from "../../context";
import { createLru, type Lru } from "../../lib/lru";
import { createTokenCache, type TokenCache } from "./token-cache";

declare module "../../context" {
  interface AppDeps {
    /** Authenticated tokens by hash, for at most a second. */
    tokenCache: TokenCache<AuthenticatedToken>;
    /** When this process last wrote each token's last-used time (written at most every 10 s). */
    tokenUseWrites: Lru<number>;
  }
}

export const createAccessTokensState = (clock: Clock) => ({
  tokenCache: createTokenCache<AuthenticatedToken>(clock.now),
  tokenUseWrites: createLru<number>(50_000),
});
