import { createPublicKey } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import type { PublicContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { ForbiddenError, NotFoundError, UnauthorizedError } from "../../../errors";
import { claimAt, matchesPolicy, verifyMessage } from "../oidc/oidc-verify";
import { failingIfRemovedMeanwhile } from "../shared/login-common";
import { NotAKeySetError, providerKeys } from "../../connectors/oidc-discovery";
import { PUBLIC_KEY_ALGORITHMS, decodeUnverified, issueWorkloadToken } from "../shared/workload-login";
import { findJwtLoginConfig } from "./jwt-auth.repository";
import { openJwksCa, openPublicKeys } from "./jwt-auth.service";

type LoginConfig = NonNullable<Awaited<ReturnType<typeof findJwtLoginConfig>>>;

const denied = (message: string) => new UnauthorizedError(`Access denied: ${message}`);

const verifyWithJwks = async (ctx: PublicContext, config: LoginConfig, jwt: string, kid: string | undefined) => {
  let keys: JSONWebKeySet;
  try {
    keys = await providerKeys(ctx.deps, config.jwks_url, {
      caCert: openJwksCa(ctx, config.id, config.encrypted_jwks_ca_cert) || undefined,
      kid,
    });
  } catch (error) {
    if (error instanceof NotAKeySetError) throw denied(error.message);
    throw denied(`Failed to fetch JWKS: ${(error as Error).message}`);
  }
  try {
    return (await jwtVerify(jwt, createLocalJWKSet(keys), { algorithms: PUBLIC_KEY_ALGORITHMS })).payload;
  } catch (error) {
    throw denied(verifyMessage(error, config.bound_issuer));
  }
};

const verifyWithStaticKeys = async (ctx: PublicContext, config: LoginConfig, jwt: string) => {
  const errors: string[] = [];
  for (const pem of openPublicKeys(ctx, config.id, config.encrypted_public_keys)) {
    try {
      return (await jwtVerify(jwt, createPublicKey(pem), { algorithms: PUBLIC_KEY_ALGORITHMS })).payload;
    } catch (error) {
      errors.push(verifyMessage(error, config.bound_issuer));
    }
  }
  throw denied(`JWT verification failed with all keys. Errors - ${errors.join("; ")}`);
};

const claimValues = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).map((v) =>
    typeof v === "object" && v !== null ? JSON.stringify(v) : String(v),
  );

/** Issuer and subject mismatches are 403, missing fields and other mismatches 401. */
const checkBounds = (config: LoginConfig, claims: JWTPayload) => {
  if (config.bound_issuer && claims.iss !== config.bound_issuer)
    throw new ForbiddenError("Access denied: issuer mismatch");
  if (config.bound_subject) {
    if (!claims.sub) throw denied("token has no subject field");
    if (!matchesPolicy(claims.sub, config.bound_subject))
      throw new ForbiddenError("Access denied: subject not allowed");
  }
  if (config.bound_audiences) {
    if (claims.aud === undefined || claims.aud === "") throw denied("token has no audience field");
    const audiences = claimValues(claims.aud);
    const allowed = config.bound_audiences.split(", ");
    if (!allowed.some((pattern) => audiences.some((aud) => matchesPolicy(aud, pattern))))
      throw denied("token audience not allowed");
  }
  for (const [key, patterns] of Object.entries(config.bound_claims)) {
    const value = claimAt(claims, key);
    if (value === undefined || value === null || value === "" || value === false || value === 0)
      throw denied(`token has no ${key} field`);
    const values = claimValues(value);
    if (!patterns.split(", ").some((pattern) => values.some((v) => matchesPolicy(v, pattern))))
      throw denied(`claim mismatch for field ${key}`);
  }
};

/** Log in with a JWT signed by one of the configured static keys or a key of the configured JWKS. */
export const loginWithJwt = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { identityId: string; jwt: string }) => {
    const config = isUuid(body.identityId) ? await findJwtLoginConfig(ctx.deps.db, body.identityId) : undefined;
    if (!config) throw new NotFoundError("JWT auth method not found for identity, did you configure JWT auth?");
    const { header } = decodeUnverified(body.jwt);
    const claims =
      config.configuration_type === "jwks"
        ? await verifyWithJwks(ctx, config, body.jwt, header.kid)
        : await verifyWithStaticKeys(ctx, config, body.jwt);
    checkBounds(config, claims);
    return issueWorkloadToken(ctx, config, { ...claims });
  },
);
