import { generateToken, hashToken, tokenHashText } from "../../crypto/tokens";
import type { Actor, AppDeps, AuthenticatedToken, ChangeContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { ForbiddenError, UnauthorizedError } from "../../errors";
import { bearerToken } from "../../http/bearer";
import {
  extendSession,
  findSessionForAuth,
  insertRefreshToken,
  insertSession,
  lockRefreshToken,
  markRefreshTokenUsed,
  revokeSessionRow,
  revokeSessionsOfUser,
} from "./session.repository";
import { signAccessToken, verifyAccessToken } from "./session-token";

/**
 * People's sessions. A session is one sign-in: an access token (short, a JWT) and a refresh token
 * (opaque, stored only as a hash) that rotates on every use. A refresh token presented a second time
 * was stolen or replayed: the whole session ends. Sessions also end when idle, at their absolute
 * lifetime, on sign-out, and when the person is deactivated.
 */

const signingKey = (deps: AppDeps) => deps.sessionSigningKey;

export type SessionTokens = { accessToken: string; refreshToken: string; expiresIn: number; sessionId: string };

const mintAccessToken = (deps: AppDeps, session: { id: string; userId: string; orgId: string; authMethod: string }) =>
  signAccessToken(
    signingKey(deps),
    {
      authTokenType: "accessToken",
      userId: session.userId,
      tokenVersionId: session.id,
      organizationId: session.orgId,
      authMethod: session.authMethod,
    },
    deps.clock.now(),
    deps.env.SESSION_ACCESS_TOKEN_TTL_S,
  );

/** A new session for a person who just signed in; written in the caller's transaction. */
export const startSession = async (
  deps: AppDeps,
  trx: Parameters<typeof insertSession>[0],
  input: { userId: string; orgId: string; authMethod: string; ip: string; userAgent: string },
): Promise<SessionTokens> => {
  const now = deps.clock.now();
  const { id } = await insertSession(trx, {
    user_id: input.userId,
    org_id: input.orgId,
    auth_method: input.authMethod,
    ip: input.ip,
    user_agent: input.userAgent.slice(0, 512),
    idle_expires_at: new Date(now + deps.env.SESSION_IDLE_TTL_S * 1000),
    absolute_expires_at: new Date(now + deps.env.SESSION_ABSOLUTE_TTL_S * 1000),
  });
  const refreshToken = generateToken("kwr");
  await insertRefreshToken(trx, id, hashToken(refreshToken));
  const accessToken = await mintAccessToken(deps, { id, ...input });
  return { accessToken, refreshToken, expiresIn: deps.env.SESSION_ACCESS_TOKEN_TTL_S, sessionId: id };
};

const sessionEnded = () => new UnauthorizedError("Your session has ended. Sign in again.");

/**
 * Exchange a refresh token for a new access token and a new refresh token. The old one is spent;
 * spending it twice revokes the session (and the revocation commits even though the call fails).
 */
export const refreshSession = async (ctx: ChangeContext, refreshToken: string | undefined): Promise<SessionTokens> => {
  const { deps } = ctx;
  if (!refreshToken || refreshToken.length > 256) throw sessionEnded();
  const tokenHash = hashToken(refreshToken);
  const outcome = await inTransaction(ctx, async (trx) => {
    const row = await lockRefreshToken(trx, tokenHash);
    if (!row || row.revoked_at) return { ended: true as const };
    ctx.scope?.notePerson({ userId: row.user_id, email: row.email }, row.org_id);
    ctx.scope?.note({ metadata: { sessionId: row.session_id, reuseDetected: row.used_at !== null } });
    const now = deps.clock.now();
    if (row.used_at) {
      await revokeSessionRow(trx, row.session_id, "refresh-token-reuse", new Date(now));
      deps.tokenCache.clear();
      deps.logger.warn({ sessionId: row.session_id }, "a spent refresh token was presented again: session revoked");
      return { ended: true as const };
    }
    const absolute = new Date(row.absolute_expires_at).getTime();
    if (new Date(row.idle_expires_at).getTime() <= now || absolute <= now) return { ended: true as const };
    await markRefreshTokenUsed(trx, tokenHash, new Date(now));
    const next = generateToken("kwr");
    await insertRefreshToken(trx, row.session_id, hashToken(next));
    await extendSession(
      trx,
      row.session_id,
      new Date(Math.min(absolute, now + deps.env.SESSION_IDLE_TTL_S * 1000)),
      new Date(now),
    );
    return { ended: false as const, row, next };
  });
  if (outcome.ended) throw sessionEnded();
  const { row, next } = outcome;
  const accessToken = await mintAccessToken(deps, {
    id: row.session_id,
    userId: row.user_id,
    orgId: row.org_id,
    authMethod: row.auth_method,
  });
  return {
    accessToken,
    refreshToken: next,
    expiresIn: deps.env.SESSION_ACCESS_TOKEN_TTL_S,
    sessionId: row.session_id,
  };
};

/** Sign out: the session of this refresh token ends (an unknown token is not an error). */
export const endSession = async (ctx: ChangeContext, refreshToken: string | undefined) => {
  const { deps } = ctx;
  if (!refreshToken || refreshToken.length > 256) return;
  await inTransaction(ctx, async (trx) => {
    const row = await lockRefreshToken(trx, hashToken(refreshToken));
    if (!row) return;
    ctx.scope?.notePerson({ userId: row.user_id, email: row.email }, row.org_id);
    ctx.scope?.note({ metadata: { sessionId: row.session_id } });
    await revokeSessionRow(trx, row.session_id, "sign-out", new Date(deps.clock.now()));
  });
  deps.tokenCache.clear();
};

/** Every session of a person ends: sign out everywhere, deactivation, removal. */
export const endSessionsOfUser = async (
  deps: AppDeps,
  trx: Parameters<typeof revokeSessionsOfUser>[0],
  userId: string,
  reason: string,
) => {
  const ended = await revokeSessionsOfUser(trx, userId, reason, new Date(deps.clock.now()));
  deps.tokenCache.clear();
  return ended.length;
};

const lookupSession = async (deps: AppDeps, sessionId: string, orgId: string): Promise<AuthenticatedToken> => {
  const row = await findSessionForAuth(deps.db, sessionId);
  const now = deps.clock.now();
  if (
    !row ||
    row.revoked_at ||
    row.org_id !== orgId ||
    new Date(row.idle_expires_at).getTime() <= now ||
    new Date(row.absolute_expires_at).getTime() <= now ||
    !row.user_active
  ) {
    throw sessionEnded();
  }
  if (row.org_role === null || row.membership_status !== "accepted" || !row.membership_active) {
    throw new ForbiddenError("You are not an active member of this organization");
  }
  return {
    actor: Object.freeze({
      type: "user" as const,
      id: row.user_id,
      name: row.email,
      orgId: row.org_id,
      orgRole: row.org_role,
      identityProjectId: null,
      tokenId: row.id,
      authMethod: row.auth_method,
      isInstanceAdmin: row.super_admin,
    }),
    ttl: 0,
    numUsesLimit: 0,
    issuedAt: now,
    trustedIps: [],
  };
};

/**
 * Resolve a person's access token: signature and expiry first (no query for a forged or expired
 * token), then the session, person and membership (cached for at most a second).
 */
export const authenticateSession = async (deps: AppDeps, authorization: string | undefined): Promise<Actor> => {
  const bearer = bearerToken(authorization);
  const claims =
    bearer.length <= 4096 ? await verifyAccessToken(signingKey(deps), bearer, deps.clock.now()) : undefined;
  if (!claims) throw new UnauthorizedError("Token expired or invalid. Sign in again.");
  const token = await deps.tokenCache.load(
    tokenHashText(bearer),
    () => lookupSession(deps, claims.tokenVersionId, claims.organizationId),
    // A session also ends by idling out, which no statement announces.
    () => "second",
  );
  return token.actor;
};

/**
 * A new session for the command line, for the person whose console session holds this refresh
 * token (which stays as it is). The two sessions end separately.
 */
export const startCliSession = async (
  ctx: ChangeContext,
  refreshToken: string | undefined,
  origin: { ip: string; userAgent: string },
): Promise<SessionTokens & { email: string }> => {
  const { deps } = ctx;
  if (!refreshToken || refreshToken.length > 256) throw sessionEnded();
  return inTransaction(ctx, async (trx) => {
    const row = await lockRefreshToken(trx, hashToken(refreshToken));
    const now = deps.clock.now();
    if (
      !row ||
      row.revoked_at ||
      row.used_at ||
      new Date(row.idle_expires_at).getTime() <= now ||
      new Date(row.absolute_expires_at).getTime() <= now
    ) {
      throw sessionEnded();
    }
    ctx.scope?.notePerson({ userId: row.user_id, email: row.email }, row.org_id);
    const tokens = await startSession(deps, trx, {
      userId: row.user_id,
      orgId: row.org_id,
      authMethod: row.auth_method,
      ip: origin.ip,
      userAgent: origin.userAgent,
    });
    ctx.scope?.note({ metadata: { sessionId: tokens.sessionId, fromSessionId: row.session_id } });
    return { ...tokens, email: row.email };
  });
};
