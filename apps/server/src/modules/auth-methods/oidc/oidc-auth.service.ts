import type { RequestContext } from "../../../context";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { defineAuthMethod } from "../shared/define-auth-method";
import { openSecret, sealOrClear } from "../shared/method-config";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { toJson } from "../shared/method-repository";
import { oidcAuthRows } from "./oidc-auth.repository";

type OidcFields = {
  oidcDiscoveryUrl: string;
  caCert: string;
  boundIssuer: string;
  boundAudiences: string;
  boundClaims: Record<string, string>;
  claimMetadataMapping?: Record<string, string>;
  boundSubject: string;
};

const toDto = (config: AuthConfigRow, oidc: Awaited<ReturnType<typeof oidcAuthRows.find>>) => ({
  ...toAuthConfigDto(config),
  oidcDiscoveryUrl: oidc.oidc_discovery_url,
  boundIssuer: oidc.bound_issuer,
  boundAudiences: oidc.bound_audiences,
  boundClaims: oidc.bound_claims,
  claimMetadataMapping: oidc.claim_metadata_mapping,
  boundSubject: oidc.bound_subject,
});

const CA_FIELD = "oidc-ca-cert";

/** Refuse a discovery URL that could only ever reach metadata or internal addresses. */
const checkDiscoveryUrl = async (ctx: RequestContext, body: Partial<OidcFields>) => {
  if (body.oidcDiscoveryUrl === undefined) return;
  await resolveOutboundTarget(body.oidcDiscoveryUrl, {
    schemes: ["https:", "http:"],
    policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND,
  });
};

const toColumns = <B extends Partial<OidcFields>>(ctx: RequestContext, configId: string, body: B) => ({
  oidc_discovery_url: body.oidcDiscoveryUrl as B["oidcDiscoveryUrl"],
  bound_issuer: body.boundIssuer as B["boundIssuer"],
  bound_audiences: body.boundAudiences as B["boundAudiences"],
  bound_subject: body.boundSubject as B["boundSubject"],
  bound_claims: toJson(body.boundClaims as B["boundClaims"]),
  encrypted_ca_cert: sealOrClear(ctx, configId, CA_FIELD, body.caCert as B["caCert"]),
});

export const oidcAuth = defineAuthMethod<CommonAttachInput & OidcFields, CommonUpdateInput & Partial<OidcFields>>()({
  spec: {
    method: "oidc-auth",
    label: "oidc auth",
    duplicateMessage: "Failed to add OIDC Auth to already configured identity",
  },
  rows: oidcAuthRows,
  missing: {
    get: "The identity does not have OIDC Auth attached",
    update: "Failed to update OIDC Auth",
    revoke: "The identity does not have OIDC auth",
  },
  toDto,
  show: (ctx, config, oidc) => ({
    ...toDto(config, oidc),
    caCert: openSecret(ctx, config.id, CA_FIELD, oidc.encrypted_ca_cert) ?? "",
  }),
  attach: {
    row: (ctx, body, configId) => ({
      ...toColumns(ctx, configId, body),
      claim_metadata_mapping: toJson(body.claimMetadataMapping ?? null),
    }),
    verify: checkDiscoveryUrl,
  },
  update: {
    row: (ctx, body, configId) => ({
      ...toColumns(ctx, configId, body),
      claim_metadata_mapping: toJson(body.claimMetadataMapping),
    }),
    verify: checkDiscoveryUrl,
  },
});
