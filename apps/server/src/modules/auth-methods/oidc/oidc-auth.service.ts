import type { RequestContext } from "../../../context";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { toAuthConfigDto } from "../shared/auth-config";
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
  findOidcAuth,
  findOidcAuthWithSecrets,
  insertOidcAuth,
  updateOidcAuth,
  type OidcAuthRow,
  type OidcAuthSecretRow,
} from "./oidc-auth.repository";

const SPEC: MethodSpec = {
  method: "oidc-auth",
  label: "oidc auth",
  duplicateMessage: "Failed to add OIDC Auth to already configured identity",
};

type OidcFields = {
  oidcDiscoveryUrl: string;
  caCert: string;
  boundIssuer: string;
  boundAudiences: string;
  boundClaims: Record<string, string>;
  claimMetadataMapping?: Record<string, string>;
  boundSubject: string;
};

const toDto = (config: AuthConfigRow, oidc: OidcAuthRow) => ({
  ...toAuthConfigDto(config),
  oidcDiscoveryUrl: oidc.oidc_discovery_url,
  boundIssuer: oidc.bound_issuer,
  boundAudiences: oidc.bound_audiences,
  boundClaims: oidc.bound_claims,
  claimMetadataMapping: oidc.claim_metadata_mapping,
  boundSubject: oidc.bound_subject,
});

const toDtoWithCa = (ctx: RequestContext, config: AuthConfigRow, oidc: OidcAuthSecretRow) => ({
  ...toDto(config, oidc),
  caCert: openSecret(ctx, config.id, "oidc-ca-cert", oidc.encrypted_ca_cert) ?? "",
});

/** Refuse a discovery URL that could only ever reach metadata or internal addresses. */
const checkDiscoveryUrl = (ctx: RequestContext, url: string) =>
  resolveOutboundTarget(url, { schemes: ["https:", "http:"], policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND });

export const attachOidcAuth = async (ctx: RequestContext, identityId: string, body: CommonAttachInput & OidcFields) => {
  const attach = await beginAttach(ctx, identityId, SPEC, body);
  await checkDiscoveryUrl(ctx, body.oidcDiscoveryUrl);
  const { config, extension } = await insertMethodConfig(ctx, attach.identityId, SPEC, attach.values, (trx, configId) =>
    insertOidcAuth(trx, configId, {
      oidc_discovery_url: body.oidcDiscoveryUrl,
      bound_issuer: body.boundIssuer,
      bound_audiences: body.boundAudiences,
      bound_claims: body.boundClaims,
      claim_metadata_mapping: body.claimMetadataMapping ?? null,
      bound_subject: body.boundSubject,
      encrypted_ca_cert: body.caCert ? sealSecret(ctx, configId, "oidc-ca-cert", body.caCert) : null,
    }),
  );
  return toDtoWithCa(ctx, config, extension);
};

export const getOidcAuth = async (ctx: RequestContext, identityId: string) => {
  const config = await authorizeMethodConfig(
    ctx,
    identityId,
    "read",
    SPEC,
    "The identity does not have OIDC Auth attached",
  );
  return toDtoWithCa(ctx, config, await findOidcAuthWithSecrets(ctx.deps.db, config.id));
};

export const updateOidcAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<OidcFields>,
) => {
  const { current, values } = await beginUpdate(ctx, identityId, SPEC, "Failed to update OIDC Auth", body);
  if (body.oidcDiscoveryUrl !== undefined) await checkDiscoveryUrl(ctx, body.oidcDiscoveryUrl);
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateOidcAuth(trx, current.id, {
      oidc_discovery_url: body.oidcDiscoveryUrl,
      bound_issuer: body.boundIssuer,
      bound_audiences: body.boundAudiences,
      bound_claims: body.boundClaims,
      claim_metadata_mapping: body.claimMetadataMapping,
      bound_subject: body.boundSubject,
      encrypted_ca_cert:
        body.caCert === undefined
          ? undefined
          : body.caCert
            ? sealSecret(ctx, current.id, "oidc-ca-cert", body.caCert)
            : null,
    }),
  );
  return toDtoWithCa(ctx, config, extension);
};

export const revokeOidcAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, SPEC, "The identity does not have OIDC auth", findOidcAuth, toDto);
