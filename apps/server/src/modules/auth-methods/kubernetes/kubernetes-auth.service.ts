import type { RequestContext } from "../../../context";
import { BadRequestError, NotFoundError } from "../../../errors";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { assertCan } from "../../authz/guard";
import { orgAbilityOf } from "../../authz/org-access";
import { findGatewayInOrg } from "../../gateways/gateway.service";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { defineAuthMethod } from "../shared/define-auth-method";
import { openSecret, sealOrClear, sealSecret } from "../shared/method-config";
import { kubernetesAuthRows } from "./kubernetes-auth.repository";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";

const CA_FIELD = "k8s-ca-cert";
const REVIEWER_FIELD = "k8s-reviewer-jwt";

type KubernetesFields = {
  kubernetesHost: string | null;
  caCert: string;
  tokenReviewerJwt?: string | null;
  tokenReviewMode: "api" | "gateway";
  allowedNamespaces: string;
  allowedNames: string;
  allowedAudience: string;
  gatewayId?: string | null;
  gatewayPoolId?: string | null;
  verifyTlsCertificate?: boolean;
};

const toDto = (config: AuthConfigRow, k8s: Awaited<ReturnType<typeof kubernetesAuthRows.find>>) => ({
  ...toAuthConfigDto(config),
  kubernetesHost: k8s.kubernetes_host,
  tokenReviewMode: k8s.token_review_mode as "api" | "gateway",
  allowedNamespaces: k8s.allowed_namespaces,
  allowedNames: k8s.allowed_names,
  allowedAudience: k8s.allowed_audience,
  gatewayId: k8s.gateway_id,
  gatewayPoolId: k8s.gateway_pool_id,
  templateId: k8s.template_id,
  verifyTlsCertificate: k8s.verify_tls_certificate,
  isTokenReviewerJwtTemplateSourced: false,
});

/** The reviewer JWT is a credential: it is shown only to callers who may edit the method. */
const toDtoWithSecrets = (
  ctx: RequestContext,
  config: AuthConfigRow,
  k8s: Awaited<ReturnType<typeof kubernetesAuthRows.findWithSecrets>>,
  showCredentials = true,
) => ({
  ...toDto(config, k8s),
  caCert: openSecret(ctx, config.id, CA_FIELD, k8s.encrypted_ca_cert) ?? "",
  tokenReviewerJwt: showCredentials
    ? (openSecret(ctx, config.id, REVIEWER_FIELD, k8s.encrypted_token_reviewer_jwt) ?? "")
    : "",
});

/**
 * The API server is not contacted here (each login reviews its token), but the host is vetted now
 * so a configuration can never point Keyward at metadata or internal addresses.
 */
const checkHost = async (ctx: RequestContext, host: string | null | undefined, mode: string) => {
  if (!host || mode !== "api") return;
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `https://${host}`;
  await resolveOutboundTarget(url, { schemes: ["https:", "http:"], policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND });
};

/**
 * Gateway references given in the body (null or absent ones are not checked). A gateway must belong
 * to the caller's organization, and another organization's answers exactly as a missing one; only
 * then is `attach-gateways` required: existence (404) before permission (403), as the reference
 * orders them. Keyward has no gateway pools, so every pool id is missing.
 */
const checkGatewayRefs = async (
  ctx: RequestContext,
  refs: { gatewayId?: string | null; gatewayPoolId?: string | null },
) => {
  if (refs.gatewayId) {
    const gateway = await findGatewayInOrg(ctx.deps.db, ctx.actor.orgId, refs.gatewayId);
    if (!gateway) throw new NotFoundError(`Gateway with ID ${refs.gatewayId} not found`);
    assertCan(orgAbilityOf(ctx.actor), "attach-gateways", "gateway");
  }
  if (refs.gatewayPoolId) throw new NotFoundError(`Gateway pool with ID ${refs.gatewayPoolId} not found`);
};

/** A CA pins the API server's certificate; turning verification off beside it would silently drop the pin. */
const refuseCaWithoutVerification = (mode: string, hasCaCert: boolean, verify: boolean) => {
  if (mode === "api" && hasCaCert && !verify)
    throw new BadRequestError(
      "TLS certificate verification cannot be disabled when a CA certificate is provided. Either remove the CA certificate or enable verification.",
    );
};

export const kubernetesAuth = defineAuthMethod<
  CommonAttachInput & KubernetesFields,
  CommonUpdateInput & Partial<KubernetesFields>
>()({
  spec: {
    method: "kubernetes-auth",
    label: "kubernetes auth",
    duplicateMessage: "Failed to add Kubernetes Auth to already configured identity",
  },
  rows: kubernetesAuthRows,
  missing: {
    get: (identityId) => new NotFoundError(`Failed to find Kubernetes Auth for identity with ID ${identityId}`),
    update: "Failed to update Kubernetes Auth",
    revoke: "The identity does not have kubernetes auth",
  },
  toDto,
  show: (ctx, config, k8s) => toDtoWithSecrets(ctx, config, k8s),
  read: async (ctx, config, k8s, mayEdit) => toDtoWithSecrets(ctx, config, k8s, await mayEdit()),
  attach: {
    row: (ctx, body, configId) => ({
      kubernetes_host: body.kubernetesHost,
      token_review_mode: body.tokenReviewMode,
      allowed_namespaces: body.allowedNamespaces,
      allowed_names: body.allowedNames,
      allowed_audience: body.allowedAudience,
      gateway_id: body.gatewayId ?? null,
      gateway_pool_id: body.gatewayPoolId ?? null,
      verify_tls_certificate: body.verifyTlsCertificate ?? body.caCert.length > 0,
      encrypted_ca_cert: sealOrClear(ctx, configId, CA_FIELD, body.caCert),
      encrypted_token_reviewer_jwt: body.tokenReviewerJwt
        ? sealSecret(ctx, configId, REVIEWER_FIELD, body.tokenReviewerJwt)
        : null,
    }),
    check: (body) =>
      refuseCaWithoutVerification(body.tokenReviewMode, body.caCert.length > 0, body.verifyTlsCertificate ?? true),
    verify: async (ctx, body) => {
      await checkGatewayRefs(ctx, body);
      await checkHost(ctx, body.kubernetesHost, body.tokenReviewMode);
    },
  },
  update: {
    /** Checked against the stored config the update lands on; answers whether TLS is verified after it. */
    verify: async (ctx, body, current) => {
      await checkGatewayRefs(ctx, body);
      const stored = await kubernetesAuthRows.findWithSecrets(ctx.deps.db, current.id);
      const mode = body.tokenReviewMode ?? stored.token_review_mode;
      const gatewayId = body.gatewayId !== undefined ? body.gatewayId : stored.gateway_id;
      const gatewayPoolId = body.gatewayPoolId !== undefined ? body.gatewayPoolId : stored.gateway_pool_id;
      const host = body.kubernetesHost !== undefined ? body.kubernetesHost : stored.kubernetes_host;
      if (mode === "api" && !host)
        throw new BadRequestError("When token review mode is set to API, a Kubernetes host must be provided");
      if (mode === "gateway" && !gatewayId && !gatewayPoolId) {
        throw new BadRequestError("When token review mode is set to Gateway, a gateway must be selected");
      }
      const hasCaCert = body.caCert !== undefined ? body.caCert.length > 0 : stored.encrypted_ca_cert !== null;
      // A new CA without a word on verification turns verification on.
      const verify = body.verifyTlsCertificate ?? (body.caCert ? true : stored.verify_tls_certificate);
      refuseCaWithoutVerification(mode, hasCaCert, verify);
      if (body.kubernetesHost !== undefined || body.tokenReviewMode !== undefined) await checkHost(ctx, host, mode);
      return verify;
    },
    row: (ctx, body, configId, verify) => ({
      kubernetes_host: body.kubernetesHost,
      token_review_mode: body.tokenReviewMode,
      allowed_namespaces: body.allowedNamespaces,
      allowed_names: body.allowedNames,
      allowed_audience: body.allowedAudience,
      gateway_id: body.gatewayId,
      gateway_pool_id: body.gatewayPoolId,
      verify_tls_certificate: verify,
      encrypted_ca_cert: sealOrClear(ctx, configId, CA_FIELD, body.caCert),
      encrypted_token_reviewer_jwt:
        body.tokenReviewerJwt === null
          ? null
          : body.tokenReviewerJwt
            ? sealSecret(ctx, configId, REVIEWER_FIELD, body.tokenReviewerJwt)
            : undefined,
    }),
  },
});
