import { randomUUID } from "node:crypto";
import { generateToken, hashToken, tokenHashText } from "../../crypto/tokens";
import type { Actor, AppDeps, AuthenticatedToken, ChangeContext } from "../../context";
import { afterCommit, inTransaction, type Tx } from "../../db/transaction";
import { ForbiddenError, UnauthorizedError } from "../../errors";
import { bearerToken } from "../../http/bearer";
import {
  extendSession,
  findSessionForAuth,
  insertRefreshToken,
  insertSession,
  lockRefreshToken,
  markRefreshTokenUsed,
  revokeSessionFamily,
  revokeSessionRow,
  revokeSessionsOfUserInOrg,
} from "./session.repository";
import { authenticate } from "../access-tokens/access-token.service";
import { isSessionAuthorization, signAccessToken, verifyAccessToken } from "./session-token";

/**
 * People's sessions. A session is one sign-in: an access token (short, a JWT) and a refresh token
 * (opaque, stored only as a hash) that rotates on every use. Sessions form families: a sign-in is a
 * family's root, and a session started from a member (the command line's, `startCliSession`) joins
 * the root's family with the root's absolute expiry. A spent refresh token of any member presented a
 * second time was stolen or replayed: the whole family ends. Sessions also end when idle, at their
 * absolute lifetime, on sign-out (each alone), and when the person is deactivated.
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

/** The family a new session joins: its root's id and the root's absolute expiry (ms). */
type Lineage = { familyId: string; absoluteExpiresAt: number };

/** A session written in the caller's transaction: a family root without `lineage`, a member with it. */
const openSession = async (
  deps: AppDeps,
  trx: Tx,
  input: { userId: string; orgId: string; authMethod: string; ip: string; userAgent: string },
  lineage?: Lineage,
): Promise<SessionTokens> => {
  const now = deps.clock.now();
  const id = randomUUID();
  const absolute = lineage?.absoluteExpiresAt ?? now + deps.env.SESSION_ABSOLUTE_TTL_S * 1000;
  await insertSession(trx, {
    id,
    family_id: lineage?.familyId ?? id,
    user_id: input.userId,
    org_id: input.orgId,
    auth_method: input.authMethod,
    ip: input.ip,
    user_agent: input.userAgent.slice(0, 512),
    idle_expires_at: new Date(Math.min(absolute, now + deps.env.SESSION_IDLE_TTL_S * 1000)),
    absolute_expires_at: new Date(absolute),
  });
  const refreshToken = generateToken("kwr");
  await insertRefreshToken(trx, id, hashToken(refreshToken));
  const accessToken = await mintAccessToken(deps, { id, ...input });
  return { accessToken, refreshToken, expiresIn: deps.env.SESSION_ACCESS_TOKEN_TTL_S, sessionId: id };
};

/** A new session for a person who just signed in (a family of its own); written in the caller's transaction. */
export const startSession = (
  deps: AppDeps,
  trx: Tx,
  input: { userId: string; orgId: string; authMethod: string; ip: string; userAgent: string },
): Promise<SessionTokens> => openSession(deps, trx, input);

const sessionEnded = () => new UnauthorizedError("Your session has ended. Sign in again.");

const validRefreshToken = (token: string | undefined): token is string => !!token && token.length <= 256;

type SpentSession = NonNullable<Awaited<ReturnType<typeof lockRefreshToken>>>;
/** `familyRevoked`: the token was spent already, and its family's revocation must commit. */
type Spent = { ended: true; familyRevoked: boolean } | { ended: false; row: SpentSession; next: string };
const ENDED = { ended: true, familyRevoked: false } as const;

/**
 * Spend a refresh token in the caller's transaction: its session gets the next one, and its idle
 * expiry moves on. A token spent already ends its session's whole family; that revocation commits
 * with the caller's transaction, so the caller answers `ended` without throwing inside it.
 */
const spendRefreshToken = async (ctx: ChangeContext, trx: Tx, token: string): Promise<Spent> => {
  const { deps } = ctx;
  const tokenHash = hashToken(token);
  const row = await lockRefreshToken(trx, tokenHash);
  if (!row) return ENDED;
  const now = deps.clock.now();
  if (row.used_at) {
    ctx.scope?.notePerson({ userId: row.user_id, email: row.email }, row.org_id);
    ctx.scope?.note({ metadata: { sessionId: row.session_id, reuseDetected: true } });
    const revoked = await revokeSessionFamily(trx, row.family_id, "refresh-token-reuse", new Date(now));
    afterCommit(trx, () => {
      deps.tokenCache.clear();
      deps.logger.warn(
        { sessionId: row.session_id, familyId: row.family_id, revoked: revoked.length },
        "a spent refresh token was presented again: its session family revoked",
      );
    });
    return { ended: true, familyRevoked: true };
  }
  if (row.revoked_at) return ENDED;
  ctx.scope?.notePerson({ userId: row.user_id, email: row.email }, row.org_id);
  ctx.scope?.note({ metadata: { sessionId: row.session_id, reuseDetected: false } });
  const absolute = new Date(row.absolute_expires_at).getTime();
  if (new Date(row.idle_expires_at).getTime() <= now || absolute <= now) return ENDED;
  await markRefreshTokenUsed(trx, tokenHash, new Date(now));
  const next = generateToken("kwr");
  await insertRefreshToken(trx, row.session_id, hashToken(next));
  await extendSession(
    trx,
    row.session_id,
    new Date(Math.min(absolute, now + deps.env.SESSION_IDLE_TTL_S * 1000)),
    new Date(now),
  );
  return { ended: false, row, next };
};

/**
 * Exchange a refresh token for a new access token and a new refresh token. The old one is spent;
 * spending it twice revokes its session's family (and the revocation commits though the call fails).
 */
export const refreshSession = async (ctx: ChangeContext, refreshToken: string | undefined): Promise<SessionTokens> => {
  const { deps } = ctx;
  if (!validRefreshToken(refreshToken)) throw sessionEnded();
  const outcome = await inTransaction(ctx, (trx) => spendRefreshToken(ctx, trx, refreshToken));
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

/**
 * Every session a person holds in one organization ends: sign out everywhere, deactivation, removal.
 * Their sessions in other organizations are those organizations' business and stay.
 */
export const endSessionsOfUser = async (
  deps: AppDeps,
  trx: Parameters<typeof revokeSessionsOfUserInOrg>[0],
  member: { userId: string; orgId: string },
  reason: string,
) => {
  const ended = await revokeSessionsOfUserInOrg(trx, member.userId, member.orgId, reason, new Date(deps.clock.now()));
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
      // A session is a sign-in through an organization's provider: it acts in that organization only,
      // and instance administration is never reached through it (that is the admin identity's).
      isInstanceAdmin: false,
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
 * Who a request's `Authorization` header names: a person's session token (a JWT) or an identity's
 * opaque access token. The one check of a bearer, at the route entry and wherever a credential is
 * checked again later (a long-lived stream).
 */
export const authenticateBearer = (
  deps: AppDeps,
  authorization: string | undefined,
  clientIp: string,
): Promise<Actor> =>
  isSessionAuthorization(authorization)
    ? authenticateSession(deps, authorization)
    : authenticate(deps, authorization, clientIp);

/**
 * A new session for the command line, for the person whose session holds this refresh token. The
 * token is spent as a refresh spends it: the presenting session gets the next one (`presenterRefreshToken`,
 * the console's new cookie), so presenting it again is reuse and ends the family. The new session
 * joins the presenter's family with the family's absolute expiry: a session started from a command
 * line's session lives no longer than the sign-in it came from. Sign-out still ends each alone.
 */
export const startCliSession = async (
  ctx: ChangeContext,
  refreshToken: string | undefined,
  origin: { ip: string; userAgent: string },
): Promise<SessionTokens & { email: string; presenterRefreshToken: string }> => {
  const { deps } = ctx;
  if (!validRefreshToken(refreshToken)) throw sessionEnded();
  const outcome = await inTransaction(ctx, async (trx) => {
    const spent = await spendRefreshToken(ctx, trx, refreshToken);
    // Nothing to keep unless a reuse revoked the family: a refused hand-off leaves no trace.
    if (spent.ended && !spent.familyRevoked) throw sessionEnded();
    if (spent.ended) return spent;
    const { row, next } = spent;
    const tokens = await openSession(
      deps,
      trx,
      { userId: row.user_id, orgId: row.org_id, authMethod: row.auth_method, ...origin },
      { familyId: row.family_id, absoluteExpiresAt: new Date(row.absolute_expires_at).getTime() },
    );
    ctx.scope?.note({ metadata: { sessionId: tokens.sessionId, fromSessionId: row.session_id } });
    return { ended: false as const, tokens: { ...tokens, email: row.email, presenterRefreshToken: next } };
  });
  if (outcome.ended) throw sessionEnded();
  return outcome.tokens;
};
