import type { RequestContext } from "../../../context";
import { AppError, BadRequestError } from "../../../errors";
import { parseTrustedIp } from "../../../lib/ip";
import { toIso } from "../../../lib/dates";
import { assertActorCoversIdentity } from "../../authz/identity-boundary";
import { orgAbilityOf } from "../../authz/org-access";
import { getProjectPermission } from "../../authz/project-access";
import { assertCan } from "../../authz/guard";
import { assertMayModifyIdentity, requireIdentity } from "../../authz/identity-lookup";
import { DEFAULT_TRUSTED_IPS } from "@keyward/contract";
import type { Tx } from "../../../db/transaction";
import { insertAuthConfig, type AuthConfigRow, type AuthConfigValues } from "./auth-config.repository";

/** What a caller wants to do with an identity's auth method. */
export type AuthMethodOperation = "attach" | "update" | "read" | "revoke" | "create-token";

const PROJECT_ACTION: Record<AuthMethodOperation, string> = {
  attach: "create",
  update: "edit",
  read: "read",
  revoke: "revoke-auth",
  "create-token": "create-token",
};
const ORG_ACTION: Record<AuthMethodOperation, string> = {
  attach: "create",
  update: "edit",
  read: "read",
  revoke: "edit",
  "create-token": "edit",
};

const BOUNDARY_MESSAGE: Record<Exclude<AuthMethodOperation, "read">, (label: string) => string> = {
  attach: (label) => `Failed to add ${label} to identity with more privileged role`,
  update: (label) => `Failed to update ${label} of identity with more privileged role`,
  revoke: (label) => `Failed to revoke ${label} of identity with more privileged role`,
  "create-token": () => "Failed to create token for identity with more privileged role",
};

/**
 * Find the identity in the caller's organization and check the permission for the operation
 *: project identities by project permission on `identity` with {identityId};
 * organization identities by org permission, plus a role boundary for revoke and token creation.
 */
export const authorizeAuthMethodOperation = async (
  ctx: RequestContext,
  identityId: string,
  operation: AuthMethodOperation,
  methodLabel: string,
) => {
  const identity = await requireIdentity(ctx, identityId);
  if (operation !== "read") await assertMayModifyIdentity(ctx, identity.id);
  if (identity.project_id) {
    const { ability } = await getProjectPermission(ctx, identity.project_id);
    assertCan(ability, PROJECT_ACTION[operation], "identity", { identityId: identity.id });
  } else {
    assertCan(orgAbilityOf(ctx.actor), ORG_ACTION[operation], "identity");
  }
  if (operation !== "read") await assertActorCoversIdentity(ctx, identity, BOUNDARY_MESSAGE[operation](methodLabel));
  return identity;
};

/** Whether the caller could change this identity's auth method: only such callers see its stored secrets. */
export const mayEditAuthMethod = async (ctx: RequestContext, identityId: string, methodLabel: string) => {
  try {
    await authorizeAuthMethodOperation(ctx, identityId, "update", methodLabel);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 403) return false;
    throw error;
  }
};

/** Common fields as the service checks them: TTL within max TTL, trusted IPs parsed. */
export const toAuthConfigValues = (input: {
  accessTokenTTL: number;
  accessTokenMaxTTL: number;
  accessTokenNumUsesLimit: number;
  accessTokenTrustedIps: { ipAddress: string }[];
  accessTokenPeriod: number;
}): AuthConfigValues => {
  if (input.accessTokenMaxTTL > 0 && input.accessTokenTTL > input.accessTokenMaxTTL) {
    throw new BadRequestError("Access token TTL cannot be greater than max TTL");
  }
  return {
    access_token_ttl: input.accessTokenTTL,
    access_token_max_ttl: input.accessTokenMaxTTL,
    access_token_num_uses_limit: input.accessTokenNumUsesLimit,
    access_token_trusted_ips: input.accessTokenTrustedIps.map((ip) => parseTrustedIp(ip.ipAddress)),
    access_token_period: input.accessTokenPeriod,
  };
};

/** Merge an update over the stored config, then validate the result as a whole. */
export const mergeAuthConfigValues = (
  current: AuthConfigRow,
  update: {
    accessTokenTTL?: number;
    accessTokenMaxTTL?: number;
    accessTokenNumUsesLimit?: number;
    accessTokenTrustedIps?: { ipAddress: string }[];
    accessTokenPeriod?: number;
  },
): AuthConfigValues =>
  toAuthConfigValues({
    accessTokenTTL: update.accessTokenTTL ?? current.access_token_ttl,
    accessTokenMaxTTL: update.accessTokenMaxTTL ?? current.access_token_max_ttl,
    accessTokenNumUsesLimit: update.accessTokenNumUsesLimit ?? current.access_token_num_uses_limit,
    accessTokenTrustedIps:
      update.accessTokenTrustedIps ??
      current.access_token_trusted_ips.map((ip) => ({
        ipAddress: ip.prefix === undefined ? ip.ipAddress : `${ip.ipAddress}/${ip.prefix}`,
      })),
    accessTokenPeriod: update.accessTokenPeriod ?? current.access_token_period,
  });

export const toAuthConfigDto = (row: AuthConfigRow) => ({
  id: row.id,
  identityId: row.identity_id,
  accessTokenTTL: row.access_token_ttl,
  accessTokenMaxTTL: row.access_token_max_ttl,
  accessTokenNumUsesLimit: row.access_token_num_uses_limit,
  accessTokenTrustedIps: row.access_token_trusted_ips,
  accessTokenPeriod: row.access_token_period,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

// Used by bootstrap to attach the first admin identity's auth method in its own transaction.
/**
 * A new organization's admin identity: Token Auth with no TTL, use limit or period, from the default
 * trusted addresses, for the one token its creator is handed.
 */
export const attachUnlimitedTokenAuth = (trx: Tx, identityId: string) =>
  insertAuthConfig(trx, identityId, "token-auth", {
    access_token_ttl: 0,
    access_token_max_ttl: 0,
    access_token_num_uses_limit: 0,
    access_token_trusted_ips: DEFAULT_TRUSTED_IPS.map((ip) => parseTrustedIp(ip.ipAddress)),
    access_token_period: 0,
  });
