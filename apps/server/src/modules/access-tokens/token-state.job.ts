import type { AppJob } from "../../context";

/** Sent by the database when a statement changes what authenticating a token answers. */
export const TOKEN_STATE_CHANNEL = "keyward_token_state";

/**
 * Follows the database's notices of changes to tokens, identities, auth methods' trusted IPs and
 * the instance admin, whichever instance or statement made them (migration 0034 lists them): each
 * drops what it touched from the token cache, so while they are heard a token is looked up once and
 * kept until something changes it. While they
 * are not heard (before the first LISTEN, after its connection is lost) tokens are kept a second.
 */
export const tokenStateJob: AppJob = {
  name: "token-state",
  start: (deps) => {
    const stop = deps.listen({
      channels: [TOKEN_STATE_CHANNEL],
      // A notice naming a token (its hash) drops that token; an empty one drops every token.
      onNotice: (_channel, tokenHash) => (tokenHash ? deps.tokenCache.forget(tokenHash) : deps.tokenCache.clear()),
      onListening: () => deps.tokenCache.follow(true),
      onLost: () => deps.tokenCache.follow(false),
      log: (error) => deps.logger.warn({ err: error }, "token state: the NOTIFY connection failed"),
    });
    return async () => {
      await stop();
      deps.tokenCache.follow(false);
    };
  },
};
