import type { RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { issueAccessToken, toAccessTokenDto } from "../access-tokens/access-token.service";
import { TOKEN_COLUMNS } from "../access-tokens/access-token.repository";
import {
  authorizeAuthMethodOperation,
  mergeAuthConfigValues,
  toAuthConfigDto,
  toAuthConfigValues,
} from "./auth-config";
import { deleteAuthConfig, findAuthConfig, insertAuthConfig, updateAuthConfig } from "./auth-config.repository";

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
    return toAuthConfigDto(await insertAuthConfig(ctx.deps.db, identity.id, METHOD, values));
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
  const updated = await updateAuthConfig(ctx.deps.db, current.id, mergeAuthConfigValues(current, body));
  ctx.deps.tokenCache.clear();
  return toAuthConfigDto(updated);
};

export const revokeTokenAuth = async (ctx: RequestContext, identityId: string) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "revoke", LABEL);
  const current = await requireConfig(ctx, identity.id, notAttached);
  await deleteAuthConfig(ctx.deps.db, current.id);
  ctx.deps.tokenCache.clear();
  return toAuthConfigDto(current);
};

export const createTokenAuthToken = async (ctx: RequestContext, identityId: string, body: { name?: string }) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "create-token", LABEL);
  const config = await requireConfig(ctx, identity.id, notAttached);
  return issueAccessToken(ctx.deps.db, config, { name: body.name ?? null });
};

export const listTokenAuthTokens = async (
  ctx: RequestContext,
  identityId: string,
  query: { offset: number; limit: number },
) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "read", LABEL);
  const rows = await ctx.deps.db
    .selectFrom("identity_access_tokens")
    .select(TOKEN_COLUMNS)
    .where("identity_id", "=", identity.id)
    .where("auth_method", "=", METHOD)
    .orderBy("updated_at", "desc")
    .orderBy("id")
    .offset(query.offset)
    .limit(query.limit)
    .execute();
  return { tokens: rows.map(toAccessTokenDto) };
};

const requireTokenOfOrg = async (ctx: RequestContext, tokenId: string) => {
  const row = isUuid(tokenId)
    ? await ctx.deps.db
        .selectFrom("identity_access_tokens as t")
        .innerJoin("identities as i", "i.id", "t.identity_id")
        .select(["t.id", "t.identity_id"])
        .where("t.id", "=", tokenId)
        .where("i.org_id", "=", ctx.actor.orgId)
        .where("t.auth_method", "=", METHOD)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError(`Token with ID ${tokenId} not found`);
  return row;
};

export const updateTokenAuthToken = async (ctx: RequestContext, tokenId: string, body: { name?: string }) => {
  const token = await requireTokenOfOrg(ctx, tokenId);
  await authorizeAuthMethodOperation(ctx, token.identity_id, "create-token", LABEL);
  const row = await ctx.deps.db
    .updateTable("identity_access_tokens")
    .set({ name: body.name ?? null, updated_at: new Date() })
    .where("id", "=", token.id)
    .returning(TOKEN_COLUMNS)
    .executeTakeFirstOrThrow();
  return { token: toAccessTokenDto(row) };
};

export const revokeTokenAuthTokenById = async (ctx: RequestContext, tokenId: string) => {
  const token = await requireTokenOfOrg(ctx, tokenId);
  await authorizeAuthMethodOperation(ctx, token.identity_id, "revoke", LABEL);
  await ctx.deps.db
    .updateTable("identity_access_tokens")
    .set({ is_revoked: true, updated_at: new Date() })
    .where("id", "=", token.id)
    .execute();
  ctx.deps.tokenCache.clear();
  return { message: "Successfully revoked access token" };
};
