import { inTransaction } from "../../db/transaction";
import type { Tx } from "../../db/transaction";
import { currentAuditScope } from "../audit/audit-scope";
import { DEFAULT_GATEWAY_HEARTBEAT_TTL, GATEWAY_ENROLLMENT_TOKEN_TTL } from "@keyward/contract";
import type { AppDeps, ChangeContext, PublicContext, RequestContext } from "../../context";
import { generateToken, hashToken } from "../../crypto/tokens";
import type { Database } from "../../db/database";
import { isUuid } from "../../db/errors";
import { bearerToken } from "../../http/bearer";
import { BadRequestError, NotFoundError, UnauthorizedError } from "../../errors";
import { toIso } from "../../lib/dates";
import { authenticate } from "../access-tokens/access-token.service";
import { assertCan } from "../authz/guard";
import { orgAbilityOf } from "../authz/org-access";
import {
  bumpTokenVersion,
  findGatewayAuthMethod,
  findGatewayByIdentity,
  lockGatewayAuthMethod,
  recordHeartbeat,
} from "./gateway.repository";
import {
  deleteAccessTokens,
  deleteUnusedEnrollmentTokens,
  findEnrollmentTokenState,
  findGatewayByAccessToken,
  insertAccessToken,
  insertEnrollmentToken,
  spendEnrollmentToken,
} from "./gateway-token.repository";
import { requireGateway } from "./gateway.service";

/** Distinct prefixes keep the token kinds apart: neither is ever accepted where the other belongs. */
const ENROLLMENT_TOKEN_PREFIX = "kwge";
const ACCESS_TOKEN_PREFIX = "kwgw";

const INVALID_ACCESS_TOKEN = "Invalid gateway access token";

/** Minting and revoking need `edit-gateways` (the reference maps both onto edit). */
export const mintEnrollmentToken = async (ctx: RequestContext, gatewayId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "edit-gateways", "gateway");
  const gateway = await requireGateway(ctx, gatewayId);
  const token = generateToken(ENROLLMENT_TOKEN_PREFIX);
  const row = await inTransaction(ctx, async (trx) => {
    // Checked under the row lock: a concurrent switch to AWS cannot leave a token behind.
    const locked = await lockGatewayAuthMethod(trx, gateway.id);
    if (!locked) throw new NotFoundError(`Gateway ${gateway.id} not found`);
    const method = locked.auth_method;
    if (method !== "token") {
      throw new BadRequestError(`Gateway is not configured for token authentication (current method: ${method})`);
    }
    await deleteUnusedEnrollmentTokens(trx, gateway.id);
    return insertEnrollmentToken(trx, {
      gateway_id: gateway.id,
      token_hash: hashToken(token),
      ttlSeconds: GATEWAY_ENROLLMENT_TOKEN_TTL,
    });
  });
  return { token, expiresAt: toIso(row.expires_at), ttl: GATEWAY_ENROLLMENT_TOKEN_TTL };
};

export const revokeGatewayAccess = async (ctx: RequestContext, gatewayId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "edit-gateways", "gateway");
  const gateway = await requireGateway(ctx, gatewayId);
  const method = gateway.auth_method;
  if (method === "identity") {
    throw new BadRequestError(
      "Identity-bound gateways cannot be revoked directly. Create a new gateway with AWS or Token auth instead.",
    );
  }
  const deletedTokenCount = await inTransaction(ctx, async (trx) => {
    // The gateway row first, as deleting the gateway does (then its tokens): otherwise the two deadlock.
    if (!(await lockGatewayAuthMethod(trx, gateway.id))) throw new NotFoundError(`Gateway ${gateway.id} not found`);
    const enrollment = await deleteUnusedEnrollmentTokens(trx, gateway.id);
    const access = await deleteAccessTokens(trx, gateway.id);
    await bumpTokenVersion(trx, gateway.id);
    return enrollment + access;
  });
  return { method, deletedTokenCount };
};

/** Why a token could not be spent, told apart only after the atomic attempt failed. */
const enrollmentFailure = async (db: Database, tokenHash: Buffer) => {
  const state = await findEnrollmentTokenState(db, tokenHash);
  if (state?.used_at) return new BadRequestError("Enrollment token has already been used");
  if (state?.is_expired) return new BadRequestError("Enrollment token has expired");
  return new BadRequestError("Invalid enrollment token");
};

/**
 * Spend a one-time enrolment token for a gateway access token. The spend, the new token generation
 * and the new access token commit together, so a failed login leaves the enrolment token unspent.
 */
const loginWithToken = async (ctx: PublicContext, token: string) => {
  const tokenHash = hashToken(token);
  const accessToken = generateToken(ACCESS_TOKEN_PREFIX);
  const gatewayId = await inTransaction(ctx, async (trx) => {
    const spent = await spendEnrollmentToken(trx, tokenHash);
    if (!spent) return undefined;
    await noteGatewayActor(trx, spent.gateway_id);
    const generation = await bumpTokenVersion(trx, spent.gateway_id, "token");
    if (!generation) throw new BadRequestError("Gateway is not configured for token authentication");
    await deleteAccessTokens(trx, spent.gateway_id);
    await insertAccessToken(trx, {
      gateway_id: spent.gateway_id,
      token_hash: hashToken(accessToken),
      token_version: generation.token_version,
    });
    return spent.gateway_id;
  });
  if (!gatewayId) throw await enrollmentFailure(ctx.deps.db, tokenHash);
  return { accessToken, gatewayId, tokenType: "Bearer" as const };
};

/** AWS login needs STS (GetCallerIdentity); the configuration is stored and validated, login is not served. */
const loginWithAws = async (ctx: PublicContext, gatewayId: string) => {
  const gateway = isUuid(gatewayId) ? await findGatewayAuthMethod(ctx.deps.db, gatewayId) : undefined;
  if (!gateway) throw new UnauthorizedError("Invalid gateway credentials");
  if (gateway.auth_method !== "aws") throw new UnauthorizedError("Gateway is not configured for AWS authentication");
  throw new BadRequestError("AWS gateway login is not available on this server");
};

/** A gateway's own calls are its events: the gateway is the actor, in its organization. */
const noteGatewayActor = async (trx: Tx, gatewayId: string) => {
  const scope = currentAuditScope(trx);
  const gateway = scope && (await findGatewayAuthMethod(trx, gatewayId));
  if (gateway) {
    scope.noteActor(
      { type: "machine", id: gateway.id, metadata: { gatewayId: gateway.id, name: gateway.name } },
      gateway.org_id,
    );
    scope.note({ metadata: { gatewayId: gateway.id } });
  }
};

export const loginGateway = (
  ctx: PublicContext,
  body: { method: "token"; token: string } | { method: "aws"; gatewayId: string },
) => (body.method === "token" ? loginWithToken(ctx, body.token) : loginWithAws(ctx, body.gatewayId));

/** The gateway behind a heartbeat; `tokenVersion` is null when a linked identity's token was used. */
export type GatewayCaller = { gatewayId: string; orgId: string; tokenVersion: number | null };

/**
 * Resolve a bearer header to a gateway: a gateway access token of the current generation, or the
 * access token of the identity an identity-linked gateway runs as.
 */
export const authenticateGateway = async (
  deps: AppDeps,
  authorization: string | undefined,
  clientIp: string,
): Promise<GatewayCaller> => {
  const bearer = bearerToken(authorization);
  if (bearer.startsWith(`${ACCESS_TOKEN_PREFIX}_`)) {
    const row = bearer.length <= 512 ? await findGatewayByAccessToken(deps.db, hashToken(bearer)) : undefined;
    if (!row) throw new UnauthorizedError(INVALID_ACCESS_TOKEN);
    return { gatewayId: row.id, orgId: row.org_id, tokenVersion: row.token_version };
  }
  const actor = await authenticate(deps, authorization, clientIp);
  const gateway = await findGatewayByIdentity(deps.db, actor.orgId, actor.id);
  if (!gateway) throw new NotFoundError(`Gateway for identity ${actor.id} not found.`);
  return { gatewayId: gateway.id, orgId: gateway.org_id, tokenVersion: null };
};

/** Liveness: the gateway is healthy until `heartbeatTTL` seconds after this heartbeat. */
export const recordGatewayHeartbeat = async (
  ctx: ChangeContext,
  caller: GatewayCaller,
  body: { heartbeatTTL?: number },
) => {
  await inTransaction(ctx, async (trx) => {
    const result = await recordHeartbeat(
      trx,
      caller.gatewayId,
      body.heartbeatTTL ?? DEFAULT_GATEWAY_HEARTBEAT_TTL,
      caller.tokenVersion,
    );
    // Revoked between authentication and the write: the heartbeat must not count.
    if (Number(result.numUpdatedRows) === 0) throw new UnauthorizedError(INVALID_ACCESS_TOKEN);
    await noteGatewayActor(trx, caller.gatewayId);
  });
  return { message: "Successfully triggered heartbeat" };
};
