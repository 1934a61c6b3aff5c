import { randomBytes } from "node:crypto";
import { inTransaction } from "../../../db/transaction";
import { noteAudit, type RequestContext } from "../../../context";
import { hashToken } from "../../../crypto/tokens";
import { isUuid } from "../../../db/errors";
import { BadRequestError, NotFoundError, PermissionBoundaryError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import { orgRoleCovers } from "../../../permissions";
import { assertCan } from "../../authz/guard";
import { assertActorCoversIdentity } from "../../authz/identity-boundary";
import { orgAbilityOf } from "../../authz/org-access";
import { getProjectPermission } from "../../authz/project-access";
import { assertMayModifyIdentity, requireIdentity } from "../../authz/identity-lookup";
import {
  findClientSecret,
  insertClientSecret,
  listActiveClientSecrets,
  revokeClientSecretRow,
  type ClientSecretRow,
} from "./universal-auth.repository";
import { UA_NOT_ATTACHED, requireUniversalAuth } from "./universal-auth.service";

/**
 * Client secret operations map to the identity token actions (reference): project identities by
 * create-token / get-token / delete-token, organization identities by org create / read / delete
 * plus a role boundary, since a client secret is a way to act as the identity.
 */
type SecretOperation = "create" | "list" | "read" | "revoke";
const PROJECT_ACTION: Record<SecretOperation, string> = {
  create: "create-token",
  list: "get-token",
  read: "get-token",
  revoke: "delete-token",
};
const ORG_ACTION: Record<SecretOperation, string> = { create: "create", list: "read", read: "read", revoke: "delete" };
const BOUNDARY_MESSAGE: Record<SecretOperation, string> = {
  create: "Failed to create client secret for identity.",
  list: "Failed to get identity client secret with more privileged role",
  read: "Failed to read identity client secret of identity with more privileged role",
  revoke: "Failed to revoke identity client secret with more privileged role",
};

const authorizeSecretOperation = async (ctx: RequestContext, identityId: string, operation: SecretOperation) => {
  const identity = await requireIdentity(ctx, identityId);
  if (operation === "create" || operation === "revoke") await assertMayModifyIdentity(ctx, identity.id);
  if (identity.project_id) {
    const { ability } = await getProjectPermission(ctx, identity.project_id);
    assertCan(ability, PROJECT_ACTION[operation], "identity", { identityId: identity.id });
  } else {
    assertCan(orgAbilityOf(ctx.actor), ORG_ACTION[operation], "identity");
    if (!orgRoleCovers(ctx.actor.orgRole, identity.org_role)) {
      throw new PermissionBoundaryError(BOUNDARY_MESSAGE[operation], [
        { action: ORG_ACTION[operation], subject: "identity", conditions: { role: identity.org_role } },
      ]);
    }
  }
  if (operation === "create" || operation === "revoke") {
    await assertActorCoversIdentity(ctx, identity, BOUNDARY_MESSAGE[operation].replace(/\.$/, ""));
  }
  const config = await requireUniversalAuth(ctx, identity.id, () => new BadRequestError(UA_NOT_ATTACHED));
  return { identity, config };
};

export const toClientSecretDto = (row: ClientSecretRow) => ({
  id: row.id,
  identityUAId: row.auth_config_id,
  description: row.description,
  clientSecretPrefix: row.client_secret_prefix,
  clientSecretNumUses: row.client_secret_num_uses,
  clientSecretNumUsesLimit: row.client_secret_num_uses_limit,
  clientSecretTTL: row.client_secret_ttl,
  isClientSecretRevoked: row.is_client_secret_revoked,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

/** The secret is returned once and stored only as a SHA-256 hash (256 random bits need no slow hash). */
export const createClientSecret = async (
  ctx: RequestContext,
  identityId: string,
  body: { description: string; numUsesLimit: number; ttl: number },
) => {
  const { config } = await authorizeSecretOperation(ctx, identityId, "create");
  const clientSecret = randomBytes(32).toString("hex");
  const row = await inTransaction(ctx, async (trx) => {
    const inserted = await insertClientSecret(trx, {
      auth_config_id: config.id,
      description: body.description,
      client_secret_prefix: clientSecret.slice(0, 4),
      client_secret_hash: hashToken(clientSecret),
      client_secret_num_uses_limit: body.numUsesLimit,
      client_secret_ttl: body.ttl,
    });
    noteAudit(ctx, { metadata: { clientSecretId: inserted.id } });
    return inserted;
  });
  return { clientSecret, clientSecretData: toClientSecretDto(row) };
};

export const listClientSecrets = async (ctx: RequestContext, identityId: string) => {
  const { config } = await authorizeSecretOperation(ctx, identityId, "list");
  return { clientSecretData: (await listActiveClientSecrets(ctx.deps.db, config.id)).map(toClientSecretDto) };
};

const requireSecret = async (ctx: RequestContext, configId: string, identityId: string, secretId: string) => {
  const row = isUuid(secretId) ? await findClientSecret(ctx.deps.db, configId, secretId) : undefined;
  if (!row) throw new NotFoundError(`Failed to find client secret with ID ${secretId}`);
  return row;
};

export const getClientSecret = async (ctx: RequestContext, identityId: string, secretId: string) => {
  const { config } = await authorizeSecretOperation(ctx, identityId, "read");
  return { clientSecretData: toClientSecretDto(await requireSecret(ctx, config.id, identityId, secretId)) };
};

/** Revoking a secret does not end tokens already issued with it (they carry their own limits). */
export const revokeClientSecret = async (ctx: RequestContext, identityId: string, secretId: string) => {
  const { config } = await authorizeSecretOperation(ctx, identityId, "revoke");
  const row = await requireSecret(ctx, config.id, identityId, secretId);
  const revoked = await inTransaction(ctx, (trx) => revokeClientSecretRow(trx, row.id));
  if (!revoked) throw new NotFoundError(`Failed to find client secret with ID ${secretId}`);
  return { clientSecretData: toClientSecretDto(revoked) };
};
