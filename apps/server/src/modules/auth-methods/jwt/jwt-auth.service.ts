import { createPublicKey } from "node:crypto";
import type { RequestContext } from "../../../context";
import { BadRequestError } from "../../../errors";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { defineAuthMethod } from "../shared/define-auth-method";
import { openSecret, sealOrClear, sealSecret } from "../shared/method-config";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { toJson } from "../shared/method-repository";
import { jwtAuthRows } from "./jwt-auth.repository";

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

const toDto = (config: AuthConfigRow, jwt: Awaited<ReturnType<typeof jwtAuthRows.find>>) => ({
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

const toDtoWithSecrets = (
  ctx: RequestContext,
  config: AuthConfigRow,
  jwt: Awaited<ReturnType<typeof jwtAuthRows.findWithSecrets>>,
  show = true,
) => ({
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

const toColumns = <B extends Partial<JwtFields>>(ctx: RequestContext, configId: string, body: B) => ({
  configuration_type: body.configurationType as B["configurationType"],
  jwks_url: body.jwksUrl as B["jwksUrl"],
  bound_issuer: body.boundIssuer as B["boundIssuer"],
  bound_audiences: body.boundAudiences as B["boundAudiences"],
  bound_claims: toJson(body.boundClaims as B["boundClaims"]),
  bound_subject: body.boundSubject as B["boundSubject"],
  encrypted_jwks_ca_cert: sealOrClear(ctx, configId, CA_FIELD, body.jwksCaCert as B["jwksCaCert"]),
  encrypted_public_keys: (body.publicKeys === undefined
    ? undefined
    : body.publicKeys.length > 0
      ? sealSecret(ctx, configId, KEYS_FIELD, JSON.stringify(body.publicKeys))
      : null) as string | null | (undefined extends B["publicKeys"] ? undefined : never),
});

export const jwtAuth = defineAuthMethod<
  CommonAttachInput & JwtFields,
  CommonUpdateInput & Partial<JwtFields> & Pick<JwtFields, "configurationType">
>()({
  spec: {
    method: "jwt-auth",
    label: "jwt auth",
    duplicateMessage: "Failed to add JWT Auth to already configured identity",
  },
  rows: jwtAuthRows,
  missing: {
    get: "The identity does not have JWT Auth attached",
    update: "Failed to update JWT Auth",
    revoke: "The identity does not have JWT auth",
  },
  toDto,
  show: (ctx, config, jwt) => toDtoWithSecrets(ctx, config, jwt),
  read: async (ctx, config, jwt, mayEdit) => toDtoWithSecrets(ctx, config, jwt, await mayEdit()),
  attach: {
    row: (ctx, body, configId) => toColumns(ctx, configId, body),
    verify: checkInputs,
  },
  update: {
    row: (ctx, body, configId) => toColumns(ctx, configId, body),
    verify: async (ctx, body, current) => {
      const stored = await jwtAuthRows.findWithSecrets(ctx.deps.db, current.id);
      const jwksUrl = body.jwksUrl ?? stored.jwks_url;
      if (body.configurationType === "jwks" && !jwksUrl) throw new BadRequestError("A JWKS URL is required");
      const keys = body.publicKeys ?? openPublicKeys(ctx, current.id, stored.encrypted_public_keys);
      if (body.configurationType === "static" && keys.length === 0)
        throw new BadRequestError("At least one public key is required");
      await checkInputs(ctx, { ...body, jwksUrl });
    },
  },
});
