import { assertActorCoversIdentity } from "../authz/identity-boundary";
import { inTransaction, type Tx } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import { BadRequestError, NotFoundError, PermissionBoundaryError } from "../../errors";
import { isBuiltInOrgRole, orgRoleCovers } from "../../permissions";
import { getOrgPermission, orgAbilityOf } from "../authz/org-access";
import { assertCan } from "../authz/guard";
import { isUuid } from "../../db/errors";
import { assertMayModifyIdentity, isInstanceAdmin, requireIdentity } from "../authz/identity-lookup";
import { toIdentityDto } from "./identity.dto";
import {
  deleteIdentityRow,
  findIdentityDetails,
  findIdentityDetailsInOrg,
  insertIdentity,
  listIdentityDetails,
  replaceIdentityMetadata,
  updateIdentityRow,
} from "./identity.repository";
import { bumpPermissionVersionForIdentity } from "../authz/permission-version";

type Metadata = { key: string; value: string }[];

/** Org roles are built in; an actor may hand out only a role its own covers. */
const assertGrantableOrgRole = (ctx: RequestContext, role: string) => {
  if (!isBuiltInOrgRole(role)) throw new BadRequestError(`Failed to find role with slug ${role}`);
  if (!orgRoleCovers(ctx.actor.orgRole, role)) {
    throw new PermissionBoundaryError(
      "Failed to create a more privileged identity. Actor privilege level is not high enough to perform this action",
      [{ action: "assign", subject: "role", conditions: { role } }],
    );
  }
};

export const loadIdentityDto = async (ctx: RequestContext, identityId: string) => {
  const row = await findIdentityDetails(ctx.deps.db, identityId);
  if (!row) throw new NotFoundError(`Failed to find identity with ID ${identityId}`);
  return toIdentityDto(row);
};

export const createOrgIdentity = async (
  ctx: RequestContext,
  body: { name: string; organizationId: string; role: string; hasDeleteProtection: boolean; metadata?: Metadata },
) => {
  assertCan(getOrgPermission(ctx.actor, body.organizationId), "create", "identity");
  assertGrantableOrgRole(ctx, body.role);
  const id = await inTransaction(ctx, async (trx) => {
    const { id } = await insertIdentity(trx, {
      org_id: ctx.actor.orgId,
      project_id: null,
      name: body.name,
      org_role: body.role,
      has_delete_protection: body.hasDeleteProtection,
    });
    await replaceIdentityMetadata(trx, id, body.metadata ?? []);
    noteAudit(ctx, { metadata: { identityId: id } });
    return id;
  });
  return loadIdentityDto(ctx, id);
};

export const listOrgIdentities = async (
  ctx: RequestContext,
  query: {
    orgId?: string;
    offset: number;
    limit: number;
    search?: string;
    includeProjectIdentities?: "true" | "false";
  },
) => {
  // Reading the organization's identities already reads a project's one by id (GET /api/v1/identities/:id).
  assertCan(getOrgPermission(ctx.actor, query.orgId ?? ctx.actor.orgId), "read", "identity");
  const { rows, totalCount } = await listIdentityDetails(ctx.deps.db, {
    orgId: ctx.actor.orgId,
    projectId: null,
    anyProject: query.includeProjectIdentities === "true",
    search: query.search,
    offset: query.offset,
    limit: query.limit,
  });
  return { identities: rows.map((row) => toIdentityDto(row)), totalCount };
};

/** One query: the identity, scoped to the caller's organization, with its methods and metadata. */
export const getOrgIdentity = async (ctx: RequestContext, identityId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "identity");
  const row = isUuid(identityId) ? await findIdentityDetailsInOrg(ctx.deps.db, identityId, ctx.actor.orgId) : undefined;
  if (!row) throw new NotFoundError(`Failed to find identity with ID ${identityId}`);
  return toIdentityDto(row);
};

export const updateOrgIdentity = async (
  ctx: RequestContext,
  identityId: string,
  body: { name?: string; role?: string; hasDeleteProtection?: boolean; metadata?: Metadata },
) => {
  assertCan(orgAbilityOf(ctx.actor), "edit", "identity");
  const identity = await requireIdentity(ctx, identityId);
  if (body.role !== undefined) {
    // Both the current and the new role must be within the actor's reach.
    assertGrantableOrgRole(ctx, identity.org_role);
    assertGrantableOrgRole(ctx, body.role);
  }
  await assertMayModifyIdentity(ctx, identity.id);
  await assertActorCoversIdentity(ctx, identity, "Failed to update identity", {
    name: body.name,
    metadata: body.metadata,
  });
  await inTransaction(ctx, async (trx) => {
    if (body.name !== undefined || body.metadata) await bumpPermissionVersionForIdentity(trx, identityId);
    await updateIdentityRow(trx, identityId, {
      name: body.name,
      org_role: body.role,
      has_delete_protection: body.hasDeleteProtection,
    });
    if (body.metadata) await replaceIdentityMetadata(trx, identityId, body.metadata);
  });
  if (body.role !== undefined) ctx.deps.tokenCache.clear();
  return loadIdentityDto(ctx, identityId);
};

/** Delete an identity; its tokens go with it and stop working at once. */
export const deleteIdentity = async (ctx: RequestContext, identityId: string) => {
  const identity = await requireIdentity(ctx, identityId);
  if (identity.has_delete_protection) throw new BadRequestError("Identity has delete protection");
  if (await isInstanceAdmin(ctx, identityId)) {
    throw new BadRequestError("The instance admin identity cannot be deleted");
  }
  const dto = await loadIdentityDto(ctx, identityId);
  noteAudit(ctx, { metadata: { identityId, name: dto.name } });
  await inTransaction(ctx, (trx) => deleteIdentityRow(trx, identityId));
  ctx.deps.tokenCache.clear();
  return dto;
};

export const deleteOrgIdentity = async (ctx: RequestContext, identityId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "delete", "identity");
  const identity = await requireIdentity(ctx, identityId);
  assertGrantableOrgRole(ctx, identity.org_role);
  await assertActorCoversIdentity(ctx, identity, "Failed to delete identity");
  return deleteIdentity(ctx, identityId);
};

// Used by bootstrap and project templates inside their own transactions.
/**
 * An identity created as part of another module's change, in that change's transaction (an
 * instance's first admin identity, a template's project-managed identities): its id.
 */
export const addIdentityInTransaction = (
  trx: Tx,
  values: { org_id: string; project_id: string | null; name: string; org_role: string; has_delete_protection: boolean },
) => insertIdentity(trx, values);
