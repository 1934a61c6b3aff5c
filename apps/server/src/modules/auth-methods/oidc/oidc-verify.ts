import { PUBLIC_KEY_JWT_ALGORITHMS } from "@keyward/contract";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import { plainGlobMatcher } from "../../../permissions";
import { ForbiddenError, UnauthorizedError } from "../../../errors";
import { discoverProvider, providerKeys, type ProviderDocumentDeps } from "../../connectors/oidc-discovery";

/** Verifying an OIDC provider's JWT: discovery and JWKS fetched through the connectors' provider-document client. */
const MAX_KEYS_WITHOUT_KID = 10;
// Only public-key algorithms: a JWKS never legitimately verifies an HMAC token.
const ALGORITHMS: string[] = [...PUBLIC_KEY_JWT_ALGORITHMS];

const denied = (message: string) => new UnauthorizedError(`Access denied: ${message}`);

/** The provider's signing keys, via its discovery document (both cached, see connectors/oidc-discovery). */
export const fetchProviderKeys = async (
  deps: ProviderDocumentDeps,
  discoveryUrl: string,
  options: { caCert?: string; kid?: string },
): Promise<JSONWebKeySet> => {
  let jwksUri: unknown;
  try {
    jwksUri = (await discoverProvider(deps, discoveryUrl, { caCert: options.caCert })).jwks_uri;
  } catch (error) {
    throw denied(`Failed to fetch OIDC discovery document from ${discoveryUrl}. ${(error as Error).message}`);
  }
  if (typeof jwksUri !== "string" || !jwksUri) {
    throw denied("OIDC discovery document does not contain a jwks_uri. The identity provider may be misconfigured.");
  }
  try {
    return await providerKeys(deps, jwksUri, options);
  } catch (error) {
    throw denied(`Failed to retrieve signing keys from OIDC provider: ${(error as Error).message}`);
  }
};

export const verifyMessage = (error: unknown, boundIssuer: string) => {
  const e = error as { code?: string; claim?: string; message?: string };
  if (e.code === "ERR_JWT_EXPIRED") return "jwt expired";
  if (e.code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") return "invalid signature";
  if (e.code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && e.claim === "iss")
    return `jwt issuer invalid. expected: ${boundIssuer}`;
  if (e.code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && e.claim === "nbf") return "jwt not active";
  if (e.code === "ERR_JOSE_ALG_NOT_ALLOWED") return "invalid algorithm";
  return e.message ?? "Invalid token";
};

/** Check signature and issuer; answers the verified claims. */
export const verifyProviderJwt = async (jwt: string, jwks: JSONWebKeySet, boundIssuer: string): Promise<JWTPayload> => {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(jwt).kid;
  } catch {
    throw new UnauthorizedError("Invalid JWT");
  }
  if (kid !== undefined && !jwks.keys.some((key) => key.kid === kid)) {
    throw denied(
      `Unable to verify JWT signature. The signing key '${kid}' was not found in the OIDC provider's JWKS endpoint. This may indicate an invalid token or misconfigured OIDC provider.`,
    );
  }
  if (kid === undefined && jwks.keys.length > MAX_KEYS_WITHOUT_KID) {
    throw denied(
      `OIDC provider has ${jwks.keys.length} signing keys. Tokens must include 'kid' header when provider has more than ${MAX_KEYS_WITHOUT_KID} keys.`,
    );
  }
  try {
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), { issuer: boundIssuer, algorithms: ALGORITHMS });
    return payload;
  } catch (error) {
    throw denied(verifyMessage(error, boundIssuer));
  }
};

/** Exact match or glob (patterns are extglob-free and bounded, checked on write). */
export const matchesPolicy = (value: string, pattern: string) => value === pattern || plainGlobMatcher(pattern)(value);

const valuesOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.map((v) => claimText(v)) : [claimText(value)];

/** `a.b.c` into nested claims. */
export const claimAt = (claims: JWTPayload, path: string): unknown =>
  path
    .split(".")
    .reduce<unknown>(
      (node, key) => (node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined),
      claims,
    );

/** Claim values as text: lists comma-joined, objects as JSON. */
const claimText = (value: unknown): string => {
  if (Array.isArray(value)) return value.map(claimText).join(",");
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  return String(value);
};

const isMissing = (value: unknown) =>
  value === undefined || value === null || value === "" || value === false || value === 0;

/** Bound subject, audiences and claims, then the claims copied into the token's metadata. */
export const checkBoundClaims = (
  claims: JWTPayload,
  policy: {
    boundSubject: string;
    boundAudiences: string;
    boundClaims: Record<string, string>;
    claimMetadataMapping: Record<string, string> | null;
  },
) => {
  if (policy.boundSubject && !matchesPolicy(String(claims.sub ?? ""), policy.boundSubject)) {
    throw new ForbiddenError("Access denied: OIDC subject not allowed.");
  }
  if (policy.boundAudiences) {
    const audiences = claims.aud === undefined ? [] : valuesOf(claims.aud);
    const allowed = policy.boundAudiences.split(", ");
    if (!allowed.some((pattern) => audiences.some((aud) => matchesPolicy(aud, pattern)))) {
      throw denied("OIDC audience not allowed.");
    }
  }
  for (const [claimKey, patterns] of Object.entries(policy.boundClaims)) {
    const value = claimAt(claims, claimKey);
    if (isMissing(value)) throw denied(`token has no ${claimKey} field`);
    const values = valuesOf(value);
    if (!patterns.split(", ").some((pattern) => values.some((v) => matchesPolicy(v, pattern)))) {
      throw denied("OIDC claim not allowed.");
    }
  }
  const mapped: Record<string, string> = {};
  for (const [metadataKey, claimKey] of Object.entries(policy.claimMetadataMapping ?? {})) {
    const value = claimAt(claims, claimKey);
    if (isMissing(value)) throw denied(`token has no ${claimKey} field`);
    mapped[metadataKey] = claimText(value);
  }
  return mapped;
};
