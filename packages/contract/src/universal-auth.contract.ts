import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, rateLimited } from "./common";
import {
  AuthConfigCommonSchema,
  DEFAULT_TRUSTED_IPS,
  IdentityParams,
  TrustedIpInputSchema,
  TrustedIpSchema,
  authConfigAttachFields,
  authConfigUpdateFields,
} from "./auth-common.schema";
import {
  ClearLockoutsResponseSchema,
  LockoutSettingsSchema,
  LoginResponseSchema,
  authMethodBody,
  identityAuthMethodRoutes,
  lockoutAttachFields,
  lockoutUpdateFields,
} from "./auth-methods.schema";

const c = initContract();

export const UniversalAuthSchema = AuthConfigCommonSchema.extend({
  clientId: z.string(),
  clientSecretTrustedIps: z.array(TrustedIpSchema),
}).merge(LockoutSettingsSchema);

export const ClientSecretDataSchema = z.object({
  id: z.string(),
  identityUAId: z.string(),
  description: z.string(),
  clientSecretPrefix: z.string(),
  clientSecretNumUses: z.number().int(),
  clientSecretNumUsesLimit: z.number().int(),
  clientSecretTTL: z.number().int(),
  isClientSecretRevoked: z.boolean(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

const TrustedIps = z.array(TrustedIpInputSchema).min(1).max(64);
const ClientSecretParams = IdentityParams.extend({ clientSecretId: z.string().trim().min(1) });
const Wrapped = z.object({ identityUniversalAuth: UniversalAuthSchema });

export const universalAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/universal-auth/login",
    metadata: { public: true },
    body: z.object({
      clientId: z.string().trim().max(128),
      clientSecret: z.string().trim().max(256),
      subOrganizationName: z.string().trim().max(64).optional(),
    }),
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with a Universal Auth client id and secret",
  },
  ...identityAuthMethodRoutes({
    slug: "universal-auth",
    name: "Universal Auth",
    attachBody: authMethodBody({
      ...authConfigAttachFields,
      clientSecretTrustedIps: TrustedIps.default(DEFAULT_TRUSTED_IPS),
      ...lockoutAttachFields,
    }),
    updateBody: authMethodBody({
      ...authConfigUpdateFields,
      clientSecretTrustedIps: TrustedIps.optional(),
      ...lockoutUpdateFields,
    }),
    response: Wrapped,
  }),
  createClientSecret: {
    method: "POST",
    path: "/api/v1/auth/universal-auth/identities/:identityId/client-secrets",
    pathParams: IdentityParams,
    body: z.object({
      description: z.string().trim().max(256).default(""),
      numUsesLimit: z.number().int().min(0).default(0),
      ttl: z.number().int().min(0).max(315_360_000).default(0),
    }),
    responses: { 200: z.object({ clientSecret: z.string(), clientSecretData: ClientSecretDataSchema }) },
    summary: "Create a client secret; its value is shown only in this response",
  },
  listClientSecrets: {
    method: "GET",
    path: "/api/v1/auth/universal-auth/identities/:identityId/client-secrets",
    pathParams: IdentityParams,
    responses: { 200: z.object({ clientSecretData: z.array(ClientSecretDataSchema) }) },
  },
  getClientSecret: {
    method: "GET",
    path: "/api/v1/auth/universal-auth/identities/:identityId/client-secrets/:clientSecretId",
    pathParams: ClientSecretParams,
    responses: { 200: z.object({ clientSecretData: ClientSecretDataSchema }) },
  },
  revokeClientSecret: {
    method: "POST",
    path: "/api/v1/auth/universal-auth/identities/:identityId/client-secrets/:clientSecretId/revoke",
    pathParams: ClientSecretParams,
    body: c.noBody(),
    responses: { 200: z.object({ clientSecretData: ClientSecretDataSchema }) },
  },
  clearLockouts: {
    method: "POST",
    path: "/api/v1/auth/universal-auth/identities/:identityId/clear-lockouts",
    pathParams: IdentityParams,
    body: c.noBody(),
    responses: { 200: ClearLockoutsResponseSchema },
  },
});
