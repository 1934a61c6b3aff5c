import { authMethodIdKey } from "../../audit/audit-scope";
import { noteAuditLogin, type PublicContext } from "../../../context";
import type { Tx } from "../../../db/transaction";
import { isForeignKeyViolation } from "../../../db/errors";
import { UnauthorizedError } from "../../../errors";
import { issueAccessToken, type AuthConfigForIssue } from "../../access-tokens/access-token.service";
import { clearLoginFailures, findLockoutState, recordLoginFailure, type LockoutSettings } from "./lockout.repository";

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

/** A login under way: the key it counts against and whether that key had failures when it began. */
export type LoginAttempt = { config: LockoutConfig; key: string; hadFailures: boolean };

/**
 * Refused only when the key is locked as the login begins. The credential is checked after this and
 * only a wrong one counts, so valid logins in parallel never lock each other out.
 */
export const beginLogin = async (ctx: PublicContext, config: LockoutConfig, key: string): Promise<LoginAttempt> => {
  const state = await findLockoutState(ctx.deps.db, config.id, key, new Date(ctx.deps.clock.now()));
  if (config.lockout_enabled && state?.locked) throw new UnauthorizedError(LOCKED);
  return { config, key, hadFailures: state !== undefined };
};

/** A wrong credential: counted (locking the key at the threshold) and answered as "Invalid credentials". */
export const failLogin = async (ctx: PublicContext, attempt: LoginAttempt): Promise<never> => {
  const { config, key } = attempt;
  if (config.lockout_enabled) {
    await recordLoginFailure(ctx.deps.db, config.id, key, settingsOf(config), new Date(ctx.deps.clock.now()));
  }
  throw new UnauthorizedError(INVALID_CREDENTIALS);
};

/** A right credential clears the key's failure count (a key without one costs no write). */
export const succeedLogin = async (ctx: PublicContext, attempt: LoginAttempt) => {
  if (attempt.hadFailures) {
    await clearLoginFailures(ctx.deps.db, attempt.config.id, attempt.key, new Date(ctx.deps.clock.now()));
  }
};

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
