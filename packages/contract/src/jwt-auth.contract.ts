import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import {
  AuthConfigCommonSchema,
  TTL_ABOVE_MAX_MESSAGE,
  authConfigAttachFields,
  authConfigUpdateFields,
  ttlWithinMax,
} from "./auth-common.schema";
import {
  GlobPatternSchema,
  LoginResponseSchema,
  PemSchema,
  WorkloadLoginBodySchema,
  globListSchema,
  identityAuthMethodRoutes,
} from "./auth-methods.schema";

const c = initContract();

export const JwtAuthSchema = AuthConfigCommonSchema.extend({
  configurationType: z.enum(["jwks", "static"]),
  jwksUrl: z.string(),
  boundIssuer: z.string(),
  boundAudiences: z.string(),
  boundClaims: z.record(z.string()),
  boundSubject: z.string(),
});

/** Attach, update and get also return the decrypted CA certificate and public keys; delete does not. */
export const JwtAuthWithSecretsSchema = JwtAuthSchema.extend({
  jwksCaCert: z.string(),
  publicKeys: z.array(z.string()),
});

const MAX_CLAIM_KEYS = 32;
const BoundClaims = z
  .record(z.string().trim().min(1).max(256), globListSchema(2_048))
  .refine((v) => Object.keys(v).length <= MAX_CLAIM_KEYS, `At most ${MAX_CLAIM_KEYS} claims`);
const PublicKeys = z.array(PemSchema.pipe(z.string().min(1))).max(16);
const JwksUrl = z.string().trim().url().max(2_048);

const base = {
  boundIssuer: z.string().trim().max(2_048).default(""),
  boundAudiences: globListSchema().default(""),
  boundClaims: BoundClaims,
  boundSubject: GlobPatternSchema.default(""),
};
const baseUpdate = {
  boundIssuer: z.string().trim().max(2_048).optional(),
  boundAudiences: globListSchema().optional(),
  boundClaims: BoundClaims.optional(),
  boundSubject: GlobPatternSchema.optional(),
};

const ttlRule = (data: { accessTokenTTL?: number; accessTokenMaxTTL?: number }, ctx: z.RefinementCtx) => {
  if (!ttlWithinMax(data))
    ctx.addIssue({ path: ["accessTokenTTL"], code: z.ZodIssueCode.custom, message: TTL_ABOVE_MAX_MESSAGE });
};

/** Both bodies are a union on `configurationType`, which update requires too. */
const AttachBody = z
  .discriminatedUnion("configurationType", [
    z.object({
      configurationType: z.literal("jwks"),
      jwksUrl: JwksUrl,
      jwksCaCert: PemSchema.default(""),
      publicKeys: PublicKeys.default([]),
      ...base,
      ...authConfigAttachFields,
    }),
    z.object({
      configurationType: z.literal("static"),
      jwksUrl: z.string().trim().max(2_048).default(""),
      jwksCaCert: PemSchema.default(""),
      publicKeys: PublicKeys.min(1),
      ...base,
      ...authConfigAttachFields,
    }),
  ])
  .superRefine(ttlRule);

const UpdateBody = z
  .discriminatedUnion("configurationType", [
    z.object({
      configurationType: z.literal("jwks"),
      jwksUrl: JwksUrl.optional(),
      jwksCaCert: PemSchema.optional(),
      publicKeys: PublicKeys.optional(),
      ...baseUpdate,
      ...authConfigUpdateFields,
    }),
    z.object({
      configurationType: z.literal("static"),
      jwksUrl: z.string().trim().max(2_048).optional(),
      jwksCaCert: PemSchema.optional(),
      publicKeys: PublicKeys.min(1).optional(),
      ...baseUpdate,
      ...authConfigUpdateFields,
    }),
  ])
  .superRefine(ttlRule);

export const jwtAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/jwt-auth/login",
    metadata: { public: true },
    body: WorkloadLoginBodySchema,
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with a JWT verified against the configured keys",
  },
  ...identityAuthMethodRoutes({
    slug: "jwt-auth",
    name: "JWT Auth",
    attachBody: AttachBody,
    updateBody: UpdateBody,
    response: z.object({ identityJwtAuth: JwtAuthWithSecretsSchema }),
    revokeResponse: z.object({ identityJwtAuth: JwtAuthSchema }),
  }),
});
