import { authMethodIdKey, noteAuditLogin } from "../../audit/audit-scope";
import type { PublicContext } from "../../../context";
import type { Tx } from "../../../db/transaction";
import { isForeignKeyViolation } from "../../../db/errors";
import { UnauthorizedError } from "../../../errors";
import { issueAccessToken, type AuthConfigForIssue } from "../../access-tokens/access-token.service";
import {
  clearLockout,
  lockIfThresholdReached,
  releaseLoginAttempt,
  reserveLoginAttempt,
  type LockoutSettings,
} from "./lockout.repository";

export const INVALID_CREDENTIALS = "Invalid credentials";
const LOCKED = "This identity auth method is temporarily locked, please try again later";

type LockoutConfig = {
  id: string;
  lockout_enabled: boolean;
  lockout_threshold: number;
  lockout_duration_seconds: number;
  lockout_counter_reset_seconds: number;
};

const settingsOf = (config: LockoutConfig): LockoutSettings => ({
  threshold: config.lockout_threshold,
  durationSeconds: config.lockout_duration_seconds,
  counterResetSeconds: config.lockout_counter_reset_seconds,
});

/**
 * Take one attempt of the lockout budget before the credential is checked (atomically, so N
 * parallel guesses never get past a threshold below N); refused while locked.
 */
export const assertNotLockedOut = async (ctx: PublicContext, config: LockoutConfig, key: string) => {
  if (
    config.lockout_enabled &&
    !(await reserveLoginAttempt(ctx.deps.db, config.id, key, settingsOf(config), new Date()))
  ) {
    throw new UnauthorizedError(LOCKED);
  }
};

/** The credential was never checked (the directory was unreachable): the attempt is given back. */
export const releaseAttempt = async (ctx: PublicContext, config: LockoutConfig, key: string) => {
  if (config.lockout_enabled) await releaseLoginAttempt(ctx.deps.db, config.id, key);
};

/** A wrong credential: its reserved attempt stays counted (locking at the threshold), answered as "Invalid credentials". */
export const failLogin = async (ctx: PublicContext, config: LockoutConfig, key: string): Promise<never> => {
  if (config.lockout_enabled) await lockIfThresholdReached(ctx.deps.db, config.id, key, settingsOf(config), new Date());
  throw new UnauthorizedError(INVALID_CREDENTIALS);
};

export const succeedLogin = (ctx: PublicContext, config: LockoutConfig, key: string) =>
  clearLockout(ctx.deps.db, config.id, key);

/** The login response: the token and its lifetimes, never the token row. */
export const loginResponse = async (
  trx: Tx,
  config: AuthConfigForIssue,
  options: { clientSecretId?: string | null } = {},
) => {
  const { accessToken, expiresIn, accessTokenMaxTTL, tokenType, tokenData } = await issueAccessToken(
    trx,
    config,
    options,
  );
  noteAuditLogin(trx, config.identity_id, config.method, {
    identityId: config.identity_id,
    identityAccessTokenId: tokenData.id,
    [authMethodIdKey(config.method)]: config.id,
    ...(options.clientSecretId ? { clientSecretId: options.clientSecretId } : {}),
  });
  return { response: { accessToken, expiresIn, accessTokenMaxTTL, tokenType }, tokenId: tokenData.id };
};

/** A login whose method or identity was removed while it ran fails like any other login, not with a 400. */
export const failingIfRemovedMeanwhile =
  <B, R>(login: (ctx: PublicContext, body: B) => Promise<R>) =>
  (ctx: PublicContext, body: B): Promise<R> =>
    login(ctx, body).catch((error: unknown) => {
      if (isForeignKeyViolation(error)) throw new UnauthorizedError(INVALID_CREDENTIALS);
      throw error;
    });
