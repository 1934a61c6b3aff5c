import type { OidcConfig } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { BadRequestError, NotFoundError, UnprocessableEntityError } from "../../errors";
import { toIso } from "../../lib/dates";
import { resolveOutboundTarget } from "../../lib/outbound";
import { assertCan } from "../authz/guard";
import { getOrgPermission } from "../authz/org-access";
import {
  findOidcConfigOfOrg,
  insertOidcConfig,
  updateOidcConfigRow,
  type OidcConfigRow,
} from "./oidc-config.repository";

const SUBJECT = "sso";
export const OIDC_SCHEMES = ["https:", "http:"] as const;

export const clientSecretContext = (configId: string) => `oidc-config:${configId}`;

/** The provider's address fields, in their wire names. */
type Endpoints = {
  configurationType: string;
  issuer: string;
  discoveryURL: string;
  authorizationEndpoint: string;
  jwksUri: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
};

const toDto = (row: OidcConfigRow): OidcConfig => ({
  id: row.id,
  orgId: row.org_id,
  configurationType: row.configuration_type,
  issuer: row.issuer,
  discoveryURL: row.discovery_url,
  authorizationEndpoint: row.authorization_endpoint,
  jwksUri: row.jwks_uri,
  tokenEndpoint: row.token_endpoint,
  userinfoEndpoint: row.userinfo_endpoint,
  clientId: row.client_id,
  isActive: row.is_active,
  allowedEmailDomains: row.allowed_email_domains,
  manageGroupMemberships: row.manage_group_memberships,
  jwtSignatureAlgorithm: row.jwt_signature_algorithm,
  caCert: row.ca_cert,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

/** "a.com,  B.com" as "a.com, b.com": one form stored, compared lower-case. */
const normalizeDomains = (domains: string) =>
  domains
    .split(",")
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean)
    .join(", ");

/**
 * A configuration names its provider either by discovery URL or by each endpoint; every URL must be
 * one Keyward may call (the outbound rules machine logins follow).
 */
const checkEndpoints = async (ctx: RequestContext, e: Endpoints) => {
  const required: [keyof Endpoints, string][] =
    e.configurationType === "custom"
      ? [
          ["issuer", "Issuer is required"],
          ["authorizationEndpoint", "Authorization endpoint is required"],
          ["jwksUri", "JWKS URI is required"],
          ["tokenEndpoint", "Token endpoint is required"],
        ]
      : [["discoveryURL", "Discovery URL is required"]];
  for (const [field, message] of required) if (!e[field]) throw new UnprocessableEntityError(message);
  const urls = (
    e.configurationType === "custom"
      ? [e.authorizationEndpoint, e.jwksUri, e.tokenEndpoint, e.userinfoEndpoint]
      : [e.discoveryURL]
  ).filter(Boolean);
  for (const url of urls) {
    try {
      await resolveOutboundTarget(url, { schemes: OIDC_SCHEMES, policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND });
    } catch (error) {
      throw new BadRequestError(`${url} cannot be used: ${(error as Error).message}`);
    }
  }
};

export const getOidcConfig = async (ctx: RequestContext, orgId: string) => {
  assertCan(getOrgPermission(ctx.actor, orgId), "read", SUBJECT);
  const row = await findOidcConfigOfOrg(ctx.deps.db, orgId);
  if (!row) throw new NotFoundError(`OIDC configuration for organization ${orgId} not found`);
  return toDto(row);
};

type CreateBody = Endpoints & {
  organizationId: string;
  clientId: string;
  clientSecret: string;
  isActive: boolean;
  allowedEmailDomains: string;
  manageGroupMemberships: boolean;
  jwtSignatureAlgorithm: string;
  caCert?: string | null;
};

export const createOidcConfig = async (ctx: RequestContext, body: CreateBody) => {
  const orgId = body.organizationId;
  assertCan(getOrgPermission(ctx.actor, orgId), "create", SUBJECT);
  await checkEndpoints(ctx, body);
  await inTransaction(ctx, async (trx) => {
    if (await findOidcConfigOfOrg(trx, orgId)) {
      throw new BadRequestError("OIDC configuration already exists for this organization; update it instead");
    }
    const { id } = await insertOidcConfig(trx, {
      org_id: orgId,
      configuration_type: body.configurationType,
      issuer: body.issuer,
      discovery_url: body.discoveryURL,
      authorization_endpoint: body.authorizationEndpoint,
      jwks_uri: body.jwksUri,
      token_endpoint: body.tokenEndpoint,
      userinfo_endpoint: body.userinfoEndpoint,
      client_id: body.clientId,
      // Sealed once the row's id is known: the ciphertext is bound to its row.
      encrypted_client_secret: "",
      is_active: body.isActive,
      allowed_email_domains: normalizeDomains(body.allowedEmailDomains),
      manage_group_memberships: body.manageGroupMemberships,
      jwt_signature_algorithm: body.jwtSignatureAlgorithm,
      ca_cert: body.caCert ?? null,
    });
    await updateOidcConfigRow(trx, id, {
      encrypted_client_secret: ctx.deps.secretBox.encrypt(body.clientSecret, clientSecretContext(id)),
    });
    ctx.scope?.note({ orgId, metadata: { oidcConfigId: id, isActive: body.isActive, clientId: body.clientId } });
  });
  return toDto((await findOidcConfigOfOrg(ctx.deps.db, orgId))!);
};

export const updateOidcConfig = async (
  ctx: RequestContext,
  body: Partial<Omit<CreateBody, "organizationId">> & { organizationId: string },
) => {
  const orgId = body.organizationId;
  assertCan(getOrgPermission(ctx.actor, orgId), "edit", SUBJECT);
  const row = await findOidcConfigOfOrg(ctx.deps.db, orgId);
  if (!row) throw new NotFoundError(`OIDC configuration for organization ${orgId} not found`);
  const endpoints: Endpoints = {
    configurationType: body.configurationType ?? row.configuration_type,
    issuer: body.issuer ?? row.issuer,
    discoveryURL: body.discoveryURL ?? row.discovery_url,
    authorizationEndpoint: body.authorizationEndpoint ?? row.authorization_endpoint,
    jwksUri: body.jwksUri ?? row.jwks_uri,
    tokenEndpoint: body.tokenEndpoint ?? row.token_endpoint,
    userinfoEndpoint: body.userinfoEndpoint ?? row.userinfo_endpoint,
  };
  await checkEndpoints(ctx, endpoints);
  ctx.scope?.note({ orgId, metadata: { oidcConfigId: row.id, isActive: body.isActive } });
  await inTransaction(ctx, (trx) =>
    updateOidcConfigRow(trx, row.id, {
      configuration_type: endpoints.configurationType,
      issuer: endpoints.issuer,
      discovery_url: endpoints.discoveryURL,
      authorization_endpoint: endpoints.authorizationEndpoint,
      jwks_uri: endpoints.jwksUri,
      token_endpoint: endpoints.tokenEndpoint,
      userinfo_endpoint: endpoints.userinfoEndpoint,
      ...(body.clientId !== undefined ? { client_id: body.clientId } : {}),
      ...(body.clientSecret !== undefined
        ? { encrypted_client_secret: ctx.deps.secretBox.encrypt(body.clientSecret, clientSecretContext(row.id)) }
        : {}),
      ...(body.isActive !== undefined ? { is_active: body.isActive } : {}),
      ...(body.allowedEmailDomains !== undefined
        ? { allowed_email_domains: normalizeDomains(body.allowedEmailDomains) }
        : {}),
      ...(body.manageGroupMemberships !== undefined ? { manage_group_memberships: body.manageGroupMemberships } : {}),
      ...(body.jwtSignatureAlgorithm !== undefined ? { jwt_signature_algorithm: body.jwtSignatureAlgorithm } : {}),
      ...(body.caCert !== undefined ? { ca_cert: body.caCert } : {}),
    }),
  );
  return toDto((await findOidcConfigOfOrg(ctx.deps.db, orgId))!);
};
