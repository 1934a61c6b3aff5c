import { z } from "zod";
import { TimestampSchema } from "./common";

/** Fields every identity auth method shares, request and response forms. */
export const MAX_TOKEN_TTL = 315_360_000;

export const TrustedIpInputSchema = z.object({ ipAddress: z.string().trim().min(1).max(64) });
export const TrustedIpSchema = z.object({
  ipAddress: z.string(),
  type: z.enum(["ipv4", "ipv6"]),
  prefix: z.number().int().optional(),
});
export type TrustedIp = z.infer<typeof TrustedIpSchema>;

export const DEFAULT_TRUSTED_IPS = [{ ipAddress: "0.0.0.0/0" }, { ipAddress: "::/0" }];

export const TtlSchema = z.number().int().min(0).max(MAX_TOKEN_TTL);

/** Attach form: defaults filled in; TTL must not exceed max TTL. */
export const authConfigAttachFields = {
  accessTokenTrustedIps: z.array(TrustedIpInputSchema).min(1).max(64).default(DEFAULT_TRUSTED_IPS),
  accessTokenTTL: TtlSchema.default(2_592_000),
  accessTokenMaxTTL: TtlSchema.default(2_592_000),
  accessTokenNumUsesLimit: z.number().int().min(0).default(0),
  accessTokenPeriod: z.number().int().min(0).max(MAX_TOKEN_TTL).default(0),
};

/** Update form: everything optional. */
export const authConfigUpdateFields = {
  accessTokenTrustedIps: z.array(TrustedIpInputSchema).min(1).max(64).optional(),
  accessTokenTTL: TtlSchema.optional(),
  accessTokenMaxTTL: TtlSchema.optional(),
  accessTokenNumUsesLimit: z.number().int().min(0).optional(),
  accessTokenPeriod: z.number().int().min(0).max(MAX_TOKEN_TTL).optional(),
};

export const ttlWithinMax = (b: { accessTokenTTL?: number; accessTokenMaxTTL?: number }) =>
  b.accessTokenTTL === undefined || b.accessTokenMaxTTL === undefined || b.accessTokenTTL <= b.accessTokenMaxTTL;
export const TTL_ABOVE_MAX_MESSAGE = "Access Token TTL cannot be greater than Access Token Max TTL.";

export const AuthConfigCommonSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  accessTokenTTL: z.number().int(),
  accessTokenMaxTTL: z.number().int(),
  accessTokenNumUsesLimit: z.number().int(),
  accessTokenTrustedIps: z.array(TrustedIpSchema),
  accessTokenPeriod: z.number().int(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

export const IdentityParams = z.object({ identityId: z.string().trim().min(1) });

/**
 * JWT signature algorithms Keyward verifies against a provider's public keys: never `none`, never HMAC
 * (a public key used as a shared secret would verify a forged token).
 */
export const PUBLIC_KEY_JWT_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;
