import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import { AuthConfigCommonSchema, authConfigAttachFields, authConfigUpdateFields } from "./auth-common.schema";
import {
  GlobPatternSchema,
  LoginResponseSchema,
  PemSchema,
  authMethodBody,
  globListSchema,
  identityAuthMethodRoutes,
} from "./auth-methods.schema";

const c = initContract();

export const OidcAuthSchema = AuthConfigCommonSchema.extend({
  oidcDiscoveryUrl: z.string(),
  boundIssuer: z.string(),
  boundAudiences: z.string(),
  boundClaims: z.record(z.string()),
  claimMetadataMapping: z.record(z.string()).nullable(),
  boundSubject: z.string().nullable(),
});

export const OidcAuthWithCaSchema = OidcAuthSchema.extend({ caCert: z.string() });

const MAX_CLAIM_KEYS = 32;
const ClaimKey = z.string().trim().min(1).max(256);
/** Claim name -> comma-separated glob patterns, stored as "a, b". */
const BoundClaims = z
  .record(ClaimKey, globListSchema(2_048))
  .refine((v) => Object.keys(v).length <= MAX_CLAIM_KEYS, `At most ${MAX_CLAIM_KEYS} claims`);
/** Metadata key -> claim name (dot path) to copy from the token. */
const ClaimMapping = z
  .record(ClaimKey, z.string().trim().min(1).max(256))
  .refine((v) => Object.keys(v).length <= MAX_CLAIM_KEYS, `At most ${MAX_CLAIM_KEYS} claims`);
const DiscoveryUrl = z.string().url().min(1).max(2_048);
const Issuer = z.string().min(1).max(2_048);

const Wrapped = z.object({ identityOidcAuth: OidcAuthWithCaSchema });

export const oidcAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/oidc-auth/login",
    metadata: { public: true },
    body: z.object({
      identityId: z.string().trim().max(64),
      jwt: z.string().trim().max(32_768),
    }),
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with a JWT from the configured OIDC provider",
  },
  ...identityAuthMethodRoutes({
    slug: "oidc-auth",
    name: "OIDC Auth",
    attachBody: authMethodBody({
      oidcDiscoveryUrl: DiscoveryUrl,
      caCert: PemSchema.default(""),
      boundIssuer: Issuer,
      boundAudiences: globListSchema().default(""),
      boundClaims: BoundClaims,
      claimMetadataMapping: ClaimMapping.optional(),
      boundSubject: GlobPatternSchema.optional().default(""),
      ...authConfigAttachFields,
    }),
    updateBody: authMethodBody({
      oidcDiscoveryUrl: DiscoveryUrl.optional(),
      caCert: PemSchema.optional(),
      boundIssuer: Issuer.optional(),
      boundAudiences: globListSchema().optional(),
      boundClaims: BoundClaims.optional(),
      claimMetadataMapping: ClaimMapping.optional(),
      boundSubject: GlobPatternSchema.optional(),
      ...authConfigUpdateFields,
    }),
    response: Wrapped,
    revokeResponse: z.object({ identityOidcAuth: OidcAuthSchema }),
  }),
});
