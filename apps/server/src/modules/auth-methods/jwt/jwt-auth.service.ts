import { createPublicKey } from "node:crypto";
import type { RequestContext } from "../../../context";
import { BadRequestError } from "../../../errors";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { mayEditAuthMethod, toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import {
  authorizeMethodConfig,
  beginAttach,
  beginUpdate,
  insertMethodConfig,
  openSecret,
  revokeMethodConfig,
  sealSecret,
  updateMethodConfig,
  type MethodSpec,
} from "../shared/method-config";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import {
  findJwtAuth,
  findJwtAuthWithSecrets,
  insertJwtAuth,
  updateJwtAuth,
  type JwtAuthRow,
  type JwtAuthSecretRow,
} from "./jwt-auth.repository";

const SPEC: MethodSpec = {
  method: "jwt-auth",
  label: "jwt auth",
  duplicateMessage: "Failed to add JWT Auth to already configured identity",
};

type JwtFields = {
  configurationType: "jwks" | "static";
  jwksUrl: string;
  jwksCaCert: string;
  publicKeys: string[];
  boundIssuer: string;
  boundAudiences: string;
  boundClaims: Record<string, string>;
  boundSubject: string;
};

const CA_FIELD = "jwt-jwks-ca-cert";
const KEYS_FIELD = "jwt-public-keys";

const toDto = (config: AuthConfigRow, jwt: JwtAuthRow) => ({
  ...toAuthConfigDto(config),
  configurationType: jwt.configuration_type as "jwks" | "static",
  jwksUrl: jwt.jwks_url,
  boundIssuer: jwt.bound_issuer,
  boundAudiences: jwt.bound_audiences,
  boundClaims: jwt.bound_claims,
  boundSubject: jwt.bound_subject,
});

/** Public keys are stored as one JSON list, sealed (PEM may hold commas in its headers). */
export const openPublicKeys = (ctx: Pick<RequestContext, "deps">, configId: string, sealed: string | null) => {
  const text = openSecret(ctx, configId, KEYS_FIELD, sealed);
  return text ? (JSON.parse(text) as string[]) : [];
};

export const openJwksCa = (ctx: Pick<RequestContext, "deps">, configId: string, sealed: string | null) =>
  openSecret(ctx, configId, CA_FIELD, sealed) ?? "";

const toDtoWithSecrets = (ctx: RequestContext, config: AuthConfigRow, jwt: JwtAuthSecretRow, show = true) => ({
  ...toDto(config, jwt),
  jwksCaCert: openJwksCa(ctx, config.id, jwt.encrypted_jwks_ca_cert),
  publicKeys: show ? openPublicKeys(ctx, config.id, jwt.encrypted_public_keys) : [],
});

/** Every static key must be a public key (or certificate) Node can load; the JWKS URL must be reachable by policy. */
const checkInputs = async (ctx: RequestContext, body: Partial<JwtFields>) => {
  for (const key of body.publicKeys ?? []) {
    try {
      if (createPublicKey(key).type !== "public") throw new Error("not a public key");
    } catch {
      throw new BadRequestError("Each public key must be a PEM public key or certificate");
    }
  }
  if (body.configurationType === "jwks" && body.jwksUrl) {
    await resolveOutboundTarget(body.jwksUrl, {
      schemes: ["https:", "http:"],
      policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND,
    });
  }
};

const sealed = (ctx: RequestContext, configId: string, body: Partial<JwtFields>) => ({
  encrypted_jwks_ca_cert:
    body.jwksCaCert === undefined
      ? undefined
      : body.jwksCaCert
        ? sealSecret(ctx, configId, CA_FIELD, body.jwksCaCert)
        : null,
  encrypted_public_keys:
    body.publicKeys === undefined
      ? undefined
      : body.publicKeys.length > 0
        ? sealSecret(ctx, configId, KEYS_FIELD, JSON.stringify(body.publicKeys))
        : null,
});

export const attachJwtAuth = async (ctx: RequestContext, identityId: string, body: CommonAttachInput & JwtFields) => {
  const attach = await beginAttach(ctx, identityId, SPEC, body);
  await checkInputs(ctx, body);
  const { config, extension } = await insertMethodConfig(
    ctx,
    attach.identityId,
    SPEC,
    attach.values,
    (trx, configId) => {
      const secrets = sealed(ctx, configId, body);
      return insertJwtAuth(trx, configId, {
        configuration_type: body.configurationType,
        jwks_url: body.jwksUrl,
        bound_issuer: body.boundIssuer,
        bound_audiences: body.boundAudiences,
        bound_claims: body.boundClaims,
        bound_subject: body.boundSubject,
        encrypted_jwks_ca_cert: secrets.encrypted_jwks_ca_cert ?? null,
        encrypted_public_keys: secrets.encrypted_public_keys ?? null,
      });
    },
  );
  return toDtoWithSecrets(ctx, config, extension);
};

export const getJwtAuth = async (ctx: RequestContext, identityId: string) => {
  const config = await authorizeMethodConfig(
    ctx,
    identityId,
    "read",
    SPEC,
    "The identity does not have JWT Auth attached",
  );
  const show = await mayEditAuthMethod(ctx, identityId, SPEC.label);
  return toDtoWithSecrets(ctx, config, await findJwtAuthWithSecrets(ctx.deps.db, config.id), show);
};

export const updateJwtAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<JwtFields> & Pick<JwtFields, "configurationType">,
) => {
  const { current, values } = await beginUpdate(ctx, identityId, SPEC, "Failed to update JWT Auth", body);
  const stored = await findJwtAuthWithSecrets(ctx.deps.db, current.id);
  const jwksUrl = body.jwksUrl ?? stored.jwks_url;
  if (body.configurationType === "jwks" && !jwksUrl) throw new BadRequestError("A JWKS URL is required");
  const keys = body.publicKeys ?? openPublicKeys(ctx, current.id, stored.encrypted_public_keys);
  if (body.configurationType === "static" && keys.length === 0)
    throw new BadRequestError("At least one public key is required");
  await checkInputs(ctx, { ...body, jwksUrl });
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateJwtAuth(trx, current.id, {
      configuration_type: body.configurationType,
      jwks_url: body.jwksUrl,
      bound_issuer: body.boundIssuer,
      bound_audiences: body.boundAudiences,
      bound_claims: body.boundClaims,
      bound_subject: body.boundSubject,
      ...sealed(ctx, current.id, body),
    }),
  );
  return toDtoWithSecrets(ctx, config, extension);
};

export const revokeJwtAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, SPEC, "The identity does not have JWT auth", findJwtAuth, toDto);
