import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { MessageSchema, TimestampSchema, rateLimited } from "./common";
import {
  AuthConfigCommonSchema,
  IdentityParams,
  authConfigAttachFields,
  authConfigUpdateFields,
} from "./auth-common.schema";
import { authMethodBody, identityAuthMethodRoutes } from "./auth-methods.schema";

const c = initContract();

export const AccessTokenRowSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  name: z.string().nullable(),
  authMethod: z.string(),
  accessTokenTTL: z.number().int(),
  accessTokenMaxTTL: z.number().int(),
  accessTokenNumUses: z.number().int(),
  accessTokenNumUsesLimit: z.number().int(),
  accessTokenPeriod: z.number().int(),
  accessTokenLastUsedAt: TimestampSchema.nullable(),
  accessTokenLastRenewedAt: TimestampSchema.nullable(),
  isAccessTokenRevoked: z.boolean(),
  identityUAClientSecretId: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

export const IssuedTokenSchema = z.object({
  accessToken: z.string(),
  expiresIn: z.number().int(),
  accessTokenMaxTTL: z.number().int(),
  tokenType: z.literal("Bearer"),
});

const TokenBody = z.object({ accessToken: z.string().trim().min(1).max(512) });

/** What the bearer of a token may learn about it (never the token itself). */
export const TokenSelfSchema = z.object({
  identity: z.object({ id: z.string(), name: z.string(), projectId: z.string().nullable() }),
  organization: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
  token: AccessTokenRowSchema.omit({ identityUAClientSecretId: true }).extend({
    /** When the TTL runs out unless renewed; null for a token without TTL. */
    expiresAt: TimestampSchema.nullable(),
    /** The latest a renewal can reach; null without max TTL (and for periodic tokens). */
    maxExpiresAt: TimestampSchema.nullable(),
  }),
});
export type TokenSelf = z.infer<typeof TokenSelfSchema>;

export const tokenAuthContract = c.router({
  ...identityAuthMethodRoutes({
    slug: "token-auth",
    name: "Token Auth",
    attachBody: authMethodBody(authConfigAttachFields),
    updateBody: authMethodBody(authConfigUpdateFields),
    response: z.object({ identityTokenAuth: AuthConfigCommonSchema }),
  }),
  createToken: {
    method: "POST",
    path: "/api/v1/auth/token-auth/identities/:identityId/tokens",
    pathParams: IdentityParams,
    body: z.object({ name: z.string().trim().max(64).optional() }),
    responses: { 200: IssuedTokenSchema.extend({ tokenData: AccessTokenRowSchema }) },
    summary: "Issue an access token with Token Auth",
  },
  listTokens: {
    method: "GET",
    path: "/api/v1/auth/token-auth/identities/:identityId/tokens",
    pathParams: IdentityParams,
    query: z.object({
      offset: z.coerce.number().int().min(0).max(100).default(0),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
    responses: { 200: z.object({ tokens: z.array(AccessTokenRowSchema) }) },
  },
  updateToken: {
    method: "PATCH",
    path: "/api/v1/auth/token-auth/tokens/:tokenId",
    pathParams: z.object({ tokenId: z.string().trim().min(1) }),
    body: z.object({ name: z.string().trim().max(64).optional() }),
    responses: { 200: z.object({ token: AccessTokenRowSchema }) },
  },
  revokeTokenById: {
    method: "POST",
    path: "/api/v1/auth/token-auth/tokens/:tokenId/revoke",
    pathParams: z.object({ tokenId: z.string().trim().min(1) }),
    body: c.noBody(),
    responses: { 200: MessageSchema },
  },
});

export const accessTokensContract = c.router({
  self: {
    method: "GET",
    path: "/api/v1/auth/token/self",
    responses: { 200: TokenSelfSchema },
    summary:
      "The calling token: its identity, organization, auth method, expiry and uses (this request counts as a use)",
  },
  revoke: {
    method: "POST",
    path: "/api/v1/auth/token/revoke",
    metadata: { public: true },
    body: TokenBody,
    responses: rateLimited({ 200: MessageSchema }),
    summary: "Revoke an access token; it stops working at once",
  },
  renew: {
    method: "POST",
    path: "/api/v1/auth/token/renew",
    metadata: { public: true },
    body: TokenBody,
    responses: rateLimited({ 200: IssuedTokenSchema }),
    summary: "Restart an access token's TTL, bounded by its max TTL",
  },
});
