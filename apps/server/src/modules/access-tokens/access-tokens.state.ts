import type { AuthenticatedToken, Clock } from "../../context";
import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";
import { createTokenCache, type TokenCache } from "./token-cache";
import { createTokenUseBuffer, type TokenUseBuffer } from "./token-use.job";

declare module "../../context" {
  interface AppDeps {
    /** Authenticated tokens by hash: machine tokens until changed, people's sessions for a second. */
    tokenCache: TokenCache<AuthenticatedToken>;
    /** When this process last wrote each token's last-used time (written at most once per ten minutes), as many tokens as the token cache. */
    tokenUseWrites: BoundedCache<number>;
    /** Last-used times waiting for the token-use flush job, by token id. */
    tokenUses: TokenUseBuffer;
  }
}

export const createAccessTokensState = (clock: Clock, maxTokens?: number) => ({
  tokenCache: createTokenCache<AuthenticatedToken>(clock, { maxEntries: maxTokens }),
  tokenUseWrites: createBoundedCache<number>({ maxEntries: maxTokens ?? 200_000 }),
  tokenUses: createTokenUseBuffer(),
});
