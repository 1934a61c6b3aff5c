import { generateToken, hashToken, tokenHashText } from "../../crypto/tokens";
import { ForbiddenError, UnauthorizedError } from "../../errors";
import { bearerToken } from "../../http/bearer";
import { createInterner } from "../../lib/intern";
import { isIpTrusted, trustedIpListOf } from "../../lib/ip";
import type { Database } from "../../db/database";
import { inTransaction } from "../../db/transaction";
import { noteAuditLogin, type AppDeps, type AuthenticatedToken, type Actor, type ChangeContext } from "../../context";
import { isUuid } from "../../db/errors";
import { toIso } from "../../lib/dates";
import {
  findTokenOfOrg,
  listTokensOfMethod,
  markTokenRenewed,
  markTokenRevoked,
  renameToken,
  revokeTokenByHash,
  findTokenByHash,
  findTokenForAuth,
  insertToken,
  spendTokenUse,
  type TokenRow,
} from "./access-token.repository";
import { bufferTokenUse } from "./token-use.job";
import type { TokenKeep } from "./token-cache";

/**
 * A token's last-used time is written at most once per ten minutes: it is informational (finding
 * tokens nobody uses), and a write per token per interval is the largest cost of an authenticated
 * read past its own work once tokens come back less often than the interval. With 100,000 identities
 * read in turn at ~1,300 req/s each token comes back every ~75 s: once a minute meant an UPDATE row
 * per request (PostgreSQL's CPU per read 5.1x that of 100 identities); ten minutes bounds the writes
 * to the active tokens / 600 per second.
 */
const LAST_USED_WRITE_INTERVAL_MS = 600_000;

const expiresAt = (token: { ttl: number; issuedAt: number }) => token.issuedAt + token.ttl * 1000;

/** Note last-used at most once per token per interval; the token-use job writes the notes in batches. */
const noteTokenUse = (deps: AppDeps, tokenId: string) => {
  const now = deps.clock.now();
  const last = deps.tokenUseWrites.get(tokenId);
  if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return;
  deps.tokenUseWrites.set(tokenId, now);
  bufferTokenUse(deps.tokenUses, tokenId, now);
};

/** What cached tokens share: their organization, its role, the project an identity belongs to, the method. */
const shared = createInterner();

const lookupToken = async (deps: AppDeps, hashKey: string): Promise<AuthenticatedToken> => {
  const row = await findTokenForAuth(deps.db, hashKey);
  if (!row || row.is_revoked) throw new UnauthorizedError("No identity access token found");
  return {
    actor: Object.freeze({
      type: "identity",
      id: row.identity_id,
      name: row.name,
      orgId: shared(row.org_id),
      orgRole: shared(row.org_role),
      identityProjectId: shared(row.project_id),
      tokenId: row.id,
      authMethod: shared(row.auth_method),
      isInstanceAdmin: row.is_instance_admin,
    }),
    ttl: row.access_token_ttl,
    numUsesLimit: row.access_token_num_uses_limit,
    issuedAt: row.issued_at,
    trustedIps: trustedIpListOf(row.trusted_ips),
  };
};

/**
 * Tokens with a use limit are never served from the cache: each use is spent in the database.
 * Others are kept until the database notes a change to the token, its identity or its auth method.
 */
const keepToken = (token: AuthenticatedToken): TokenKeep => (token.numUsesLimit === 0 ? "until-changed" : "never");

/**
 * Resolve a bearer header to an actor, checking revocation, TTL, trusted IPs and the use limit
 *. One query for an uncached token; a second, atomic one only when it has a use limit.
 */
export const authenticate = async (
  deps: AppDeps,
  authorization: string | undefined,
  clientIp: string,
): Promise<Actor> => {
  const bearer = bearerToken(authorization);
  if (bearer.length > 512) throw new UnauthorizedError("No identity access token found");
  // The hash as text keys the cache and the batched lookup.
  const key = tokenHashText(bearer);
  const token = await deps.tokenCache.load(key, () => lookupToken(deps, key), keepToken);
  if (!isIpTrusted(clientIp, token.trustedIps)) {
    throw new ForbiddenError("You are not allowed to access this resource from the current IP address");
  }
  if (token.ttl > 0 && deps.clock.now() > expiresAt(token)) {
    throw new UnauthorizedError("Failed to renew MI access token due to TTL expiration");
  }
  if (token.numUsesLimit > 0 && !(await spendTokenUse(deps.db, token.actor.tokenId))) {
    throw new UnauthorizedError("Unable to renew because access token number of uses limit reached");
  }
  noteTokenUse(deps, token.actor.tokenId);
  return token.actor;
};

export const toAccessTokenDto = (row: TokenRow) => ({
  id: row.id,
  identityId: row.identity_id,
  name: row.name,
  authMethod: row.auth_method,
  accessTokenTTL: row.access_token_ttl,
  accessTokenMaxTTL: row.access_token_max_ttl,
  accessTokenNumUses: row.access_token_num_uses,
  accessTokenNumUsesLimit: row.access_token_num_uses_limit,
  accessTokenPeriod: row.access_token_period,
  accessTokenLastUsedAt: toIso(row.last_used_at),
  accessTokenLastRenewedAt: toIso(row.last_renewed_at),
  isAccessTokenRevoked: row.is_revoked,
  identityUAClientSecretId: row.client_secret_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

export type AuthConfigForIssue = {
  id: string;
  identity_id: string;
  method: string;
  access_token_ttl: number;
  access_token_max_ttl: number;
  access_token_num_uses_limit: number;
  access_token_period: number;
};

/**
 * Mint an access token under an auth method's settings. Every login path (token auth, universal
 * auth, LDAP, OIDC, ...) ends here, so tokens always carry the same limits and shape.
 */
export const issueAccessToken = async (
  db: Database,
  config: AuthConfigForIssue,
  options: { name?: string | null; clientSecretId?: string | null } = {},
) => {
  const accessToken = generateToken();
  const ttl = config.access_token_period > 0 ? config.access_token_period : config.access_token_ttl;
  const row = await insertToken(db, {
    identity_id: config.identity_id,
    auth_config_id: config.id,
    token_hash: hashToken(accessToken),
    name: options.name ?? null,
    auth_method: config.method,
    access_token_ttl: ttl,
    access_token_max_ttl: config.access_token_max_ttl,
    access_token_num_uses_limit: config.access_token_num_uses_limit,
    access_token_period: config.access_token_period,
    client_secret_id: options.clientSecretId ?? null,
  });
  return {
    accessToken,
    expiresIn: ttl,
    accessTokenMaxTTL: config.access_token_max_ttl,
    tokenType: "Bearer" as const,
    tokenData: toAccessTokenDto(row),
  };
};

export const revokeAccessToken = async (ctx: ChangeContext, accessToken: string) => {
  const { deps } = ctx;
  const tokenHash = hashToken(accessToken);
  const updated = await inTransaction(ctx, async (trx) => {
    const row = await revokeTokenByHash(trx, tokenHash);
    // Whoever holds the token revokes it: the event names that identity.
    if (row) noteAuditLogin(ctx, row.identity_id, row.auth_method, { identityId: row.identity_id, tokenId: row.id });
    return row;
  });
  deps.tokenCache.forget(tokenHash.toString("base64"));
  if (!updated) throw new UnauthorizedError("No identity access token found");
  return { message: "Successfully revoked access token" };
};

/** Restart the TTL from now, never past max TTL (periodic tokens have no max). */
export const renewAccessToken = async (ctx: ChangeContext, accessToken: string) => {
  const { deps } = ctx;
  const row = await findTokenByHash(deps.db, hashToken(accessToken));
  if (!row || row.is_revoked) throw new UnauthorizedError("No identity access token found");
  const now = deps.clock.now();
  const issuedAt = new Date(row.last_renewed_at ?? row.created_at).getTime();
  if (row.access_token_ttl > 0 && now > issuedAt + row.access_token_ttl * 1000) {
    throw new UnauthorizedError("Failed to renew MI access token due to TTL expiration");
  }
  if (row.access_token_period === 0 && row.access_token_max_ttl > 0) {
    const maxExpiry = new Date(row.created_at).getTime() + row.access_token_max_ttl * 1000;
    if (now > maxExpiry) throw new UnauthorizedError("Failed to renew MI access token due to Max TTL expiration");
    if (now + row.access_token_ttl * 1000 > maxExpiry) {
      throw new UnauthorizedError("Failed to renew MI access token past its Max TTL expiration");
    }
  }
  await inTransaction(ctx, async (trx) => {
    await markTokenRenewed(trx, row.id, new Date(now));
    noteAuditLogin(ctx, row.identity_id, row.auth_method, { identityId: row.identity_id, tokenId: row.id });
  });
  // This token's TTL starts again: only its entry goes (other instances drop it on the database's notice).
  deps.tokenCache.forget(tokenHashText(accessToken));
  return {
    accessToken,
    expiresIn: row.access_token_ttl,
    accessTokenMaxTTL: row.access_token_max_ttl,
    tokenType: "Bearer" as const,
  };
};

/** The tokens one auth method issued to an identity, newest first. */
export const listIssuedTokens = async (
  deps: AppDeps,
  identityId: string,
  method: string,
  page: { offset: number; limit: number },
) => (await listTokensOfMethod(deps.db, identityId, method, page)).map(toAccessTokenDto);

/** A token of the caller's organization issued by `method`; undefined for anything else. */
export const findIssuedToken = (deps: AppDeps, orgId: string, tokenId: string, method: string) =>
  isUuid(tokenId) ? findTokenOfOrg(deps.db, orgId, tokenId, method) : Promise.resolve(undefined);

export const renameIssuedToken = async (ctx: ChangeContext, tokenId: string, name: string | null) =>
  toAccessTokenDto(await inTransaction(ctx, (trx) => renameToken(trx, tokenId, name)));

/** Revoked at once on this instance; other instances drop their cached row on the database's notice. */
export const revokeIssuedToken = async (ctx: ChangeContext, tokenId: string) => {
  const revoked = await inTransaction(ctx, (trx) => markTokenRevoked(trx, tokenId));
  if (revoked) ctx.deps.tokenCache.forget(Buffer.from(revoked.token_hash).toString("base64"));
};
