import { assertActorCoversIdentity } from "../authz/identity-boundary";
import { inTransaction } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import { NotFoundError } from "../../errors";
import { getProjectPermission } from "../authz/project-access";
import { assertCan } from "../authz/guard";
import { findOrgIdentity } from "../authz/identity-lookup";
import { addMemberInTransaction } from "../projects/membership.service";
import { toIdentityDto } from "./identity.dto";
import { deleteIdentity, loadIdentityDto } from "./identity.service";
import { insertIdentity, listIdentityDetails, replaceIdentityMetadata, updateIdentityRow } from "./identity.repository";
import { bumpPermissionVersionForIdentity } from "../authz/permission-version";

type Metadata = { key: string; value: string }[];

/**
 * Identities owned by a project: created with no-access on both the
 * organization and the project, managed with project permissions on `identity`.
 */
export const createProjectIdentity = async (
  ctx: RequestContext,
  projectId: string,
  body: { name: string; hasDeleteProtection: boolean; metadata?: Metadata },
) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "create", "identity");
  const id = await inTransaction(ctx, async (trx) => {
    const { id } = await insertIdentity(trx, {
      org_id: ctx.actor.orgId,
      project_id: project.id,
      name: body.name,
      org_role: "no-access",
      has_delete_protection: body.hasDeleteProtection,
    });
    await addMemberInTransaction(trx, project.id, id, [{ role: "no-access", customRoleId: null, isTemporary: false }]);
    await replaceIdentityMetadata(trx, id, body.metadata ?? []);
    noteAudit(ctx, { metadata: { identityId: id } });
    return id;
  });
  return loadIdentityDto(ctx, id);
};

const requireProjectIdentity = async (ctx: RequestContext, projectId: string, identityId: string, action: string) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, action, "identity", { identityId });
  const identity = await findOrgIdentity(ctx, identityId);
  if (!identity || identity.project_id !== project.id)
    throw new NotFoundError(`Identity with id ${identityId} not found`);
  return identity;
};

export const listProjectIdentities = async (
  ctx: RequestContext,
  projectId: string,
  query: { offset: number; limit: number; search?: string },
) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "read", "identity");
  const { rows, totalCount } = await listIdentityDetails(ctx.deps.db, {
    orgId: ctx.actor.orgId,
    projectId: project.id,
    ...query,
  });
  return { identities: rows.map((row) => toIdentityDto(row)), totalCount };
};

export const getProjectIdentity = async (ctx: RequestContext, projectId: string, identityId: string) => {
  await requireProjectIdentity(ctx, projectId, identityId, "read");
  return loadIdentityDto(ctx, identityId);
};

export const updateProjectIdentity = async (
  ctx: RequestContext,
  projectId: string,
  identityId: string,
  body: { name?: string; hasDeleteProtection?: boolean; metadata?: Metadata },
) => {
  const identity = await requireProjectIdentity(ctx, projectId, identityId, "edit");
  await assertActorCoversIdentity(ctx, identity, "Failed to update identity", {
    name: body.name,
    metadata: body.metadata,
  });
  await inTransaction(ctx, async (trx) => {
    if (body.name !== undefined || body.metadata) await bumpPermissionVersionForIdentity(trx, identityId);
    await updateIdentityRow(trx, identityId, { name: body.name, has_delete_protection: body.hasDeleteProtection });
    if (body.metadata) await replaceIdentityMetadata(trx, identityId, body.metadata);
  });
  return loadIdentityDto(ctx, identityId);
};

export const deleteProjectIdentity = async (ctx: RequestContext, projectId: string, identityId: string) => {
  const identity = await requireProjectIdentity(ctx, projectId, identityId, "delete");
  await assertActorCoversIdentity(ctx, identity, "Failed to delete identity");
  return deleteIdentity(ctx, identityId);
};
