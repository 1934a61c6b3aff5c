import { inTransaction } from "../../../db/transaction";
import { noteAudit, type RequestContext } from "../../../context";
import { isUniqueViolation } from "../../../db/errors";
import { BadRequestError, NotFoundError } from "../../../errors";
import {
  findIssuedToken,
  issueAccessToken,
  listIssuedTokens,
  renameIssuedToken,
  revokeIssuedToken,
} from "../../access-tokens/access-token.service";
import {
  authorizeAuthMethodOperation,
  mergeAuthConfigValues,
  toAuthConfigDto,
  toAuthConfigValues,
} from "../shared/auth-config";
import { deleteAuthConfig, findAuthConfig, insertAuthConfig, updateAuthConfig } from "../shared/auth-config.repository";

const METHOD = "token-auth";
const LABEL = "token auth";

type CommonInput = {
  accessTokenTTL: number;
  accessTokenMaxTTL: number;
  accessTokenNumUsesLimit: number;
  accessTokenTrustedIps: { ipAddress: string }[];
  accessTokenPeriod: number;
};

const requireConfig = async (ctx: RequestContext, identityId: string, missing: () => Error) => {
  const config = await findAuthConfig(ctx.deps.db, identityId, METHOD);
  if (!config) throw missing();
  return config;
};
const notAttached = () => new BadRequestError("The identity does not have Token Auth");

export const attachTokenAuth = async (ctx: RequestContext, identityId: string, body: CommonInput) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "attach", LABEL);
  const values = toAuthConfigValues(body);
  try {
    return toAuthConfigDto(await inTransaction(ctx, (trx) => insertAuthConfig(trx, identity.id, METHOD, values)));
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError("Failed to add Token Auth to already configured identity");
    throw error;
  }
};

export const getTokenAuth = async (ctx: RequestContext, identityId: string) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "read", LABEL);
  return toAuthConfigDto(
    await requireConfig(ctx, identity.id, () => new NotFoundError("Token Auth configuration not found for identity")),
  );
};

export const updateTokenAuth = async (ctx: RequestContext, identityId: string, body: Partial<CommonInput>) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "update", LABEL);
  const current = await requireConfig(ctx, identity.id, notAttached);
  const updated = await inTransaction(ctx, (trx) =>
    updateAuthConfig(trx, current.id, mergeAuthConfigValues(current, body)),
  );
  ctx.deps.tokenCache.clear();
  return toAuthConfigDto(updated);
};

export const revokeTokenAuth = async (ctx: RequestContext, identityId: string) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "revoke", LABEL);
  const current = await requireConfig(ctx, identity.id, notAttached);
  await inTransaction(ctx, (trx) => deleteAuthConfig(trx, current.id));
  ctx.deps.tokenCache.clear();
  return toAuthConfigDto(current);
};

export const createTokenAuthToken = async (ctx: RequestContext, identityId: string, body: { name?: string }) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "create-token", LABEL);
  const config = await requireConfig(ctx, identity.id, notAttached);
  return inTransaction(ctx, async (trx) => {
    const issued = await issueAccessToken(trx, config, { name: body.name ?? null });
    noteAudit(ctx, { metadata: { tokenId: issued.tokenData.id } });
    return issued;
  });
};

export const listTokenAuthTokens = async (
  ctx: RequestContext,
  identityId: string,
  query: { offset: number; limit: number },
) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "read", LABEL);
  return { tokens: await listIssuedTokens(ctx.deps, identity.id, METHOD, query) };
};

const requireTokenOfOrg = async (ctx: RequestContext, tokenId: string) => {
  const row = await findIssuedToken(ctx.deps, ctx.actor.orgId, tokenId, METHOD);
  if (!row) throw new NotFoundError(`Token with ID ${tokenId} not found`);
  return row;
};

export const updateTokenAuthToken = async (ctx: RequestContext, tokenId: string, body: { name?: string }) => {
  const token = await requireTokenOfOrg(ctx, tokenId);
  await authorizeAuthMethodOperation(ctx, token.identity_id, "create-token", LABEL);
  noteAudit(ctx, { metadata: { identityId: token.identity_id } });
  return { token: await renameIssuedToken(ctx, token.id, body.name ?? null) };
};

export const revokeTokenAuthTokenById = async (ctx: RequestContext, tokenId: string) => {
  const token = await requireTokenOfOrg(ctx, tokenId);
  await authorizeAuthMethodOperation(ctx, token.identity_id, "revoke", LABEL);
  noteAudit(ctx, { metadata: { identityId: token.identity_id } });
  await revokeIssuedToken(ctx, token.id);
  return { message: "Successfully revoked access token" };
};
