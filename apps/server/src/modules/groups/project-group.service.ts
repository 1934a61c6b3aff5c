import { inTransaction, type Tx } from "../../db/transaction";
import type { RoleAssignmentInput } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { getProjectPermission, type ProjectPermission } from "../authz/project-access";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import type { RoleGrant } from "../authz/membership-roles";
import { resolveRoleGrants, toMembershipRoleDto } from "../projects/membership-roles";
import { toGroupMembershipRowDto, toProjectGroupMembershipDto } from "./group.dto";
import { findGroupByName, findGroupBySlug, findGroupInOrg } from "./group.repository";
import {
  deleteGroupMembership,
  findGroupMembershipRoles,
  findProjectGroupMembership,
  insertGroupMembershipWithRoles,
  listProjectGroupMemberships,
  replaceGroupMembershipRoles,
} from "./project-group.repository";

const BOUNDARY = "Failed to assign group to a more privileged role";

/** By id, or (for older clients) by name or slug, within the caller's organization. */
const requireOrgGroup = async (ctx: RequestContext, idOrName: string) => {
  const db = ctx.deps.db;
  const orgId = ctx.actor.orgId;
  const group = isUuid(idOrName)
    ? await findGroupInOrg(db, orgId, idOrName)
    : ((await findGroupByName(db, orgId, idOrName)) ?? (await findGroupBySlug(db, orgId, idOrName)));
  if (!group) throw new NotFoundError(`Failed to find group with ID ${idOrName}`);
  return group;
};

const requireMembership = async (ctx: RequestContext, permission: ProjectPermission, groupId: string) => {
  const group = await requireOrgGroup(ctx, groupId);
  const membership = await findProjectGroupMembership(ctx.deps.db, permission.project.id, group.id);
  if (!membership)
    throw new NotFoundError(`Group with ID ${groupId} is not a member of project with ID ${permission.project.id}`);
  return membership;
};

export const addGroupToProject = async (
  ctx: RequestContext,
  projectId: string,
  groupIdOrName: string,
  body: { role: string; roles?: RoleAssignmentInput[] },
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "create", "groups");
  const group = await requireOrgGroup(ctx, groupIdOrName);
  const grants = await resolveRoleGrants(
    ctx.deps.db,
    permission.project.id,
    body.roles ?? [{ role: body.role, isTemporary: false }],
  );
  assertWithinBoundary(
    permission.ability,
    grants.flatMap((g) => g.rules),
    BOUNDARY,
  );
  try {
    const membership = await inTransaction(ctx, async (trx) => {
      await bumpPermissionVersion(trx, [permission.project.id]);
      return insertGroupMembershipWithRoles(trx, permission.project.id, group.id, grants);
    });
    return toGroupMembershipRowDto(membership);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new BadRequestError(`Group with ID ${group.id} already exists in project with ID ${permission.project.id}`);
    throw error;
  }
};

/** Spec GET /api/v1/projects/{projectId}/groups. */
export const listProjectGroups = async (ctx: RequestContext, projectId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "groups");
  const rows = await listProjectGroupMemberships(ctx.deps.db, permission.project.id);
  const roles = await findGroupMembershipRoles(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => toProjectGroupMembershipDto(row, roles));
};

/** Changing or removing a group's project roles needs the caller to hold what those roles grant now. */
const assertCurrentRolesWithinActor = async (
  ctx: RequestContext,
  permission: ProjectPermission,
  membershipId: string,
) => {
  const current = await findGroupMembershipRoles(ctx.deps.db, [membershipId]);
  const grants = await resolveRoleGrants(
    ctx.deps.db,
    permission.project.id,
    current.map((r) => ({ role: r.custom_role_slug ?? r.role, isTemporary: false as const })),
  );
  assertWithinBoundary(
    permission.ability,
    grants.flatMap((g) => g.rules),
    "Failed to change a more privileged group",
  );
};

export const getProjectGroup = async (ctx: RequestContext, projectId: string, groupId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "groups");
  const membership = await requireMembership(ctx, permission, groupId);
  return toProjectGroupMembershipDto(membership, await findGroupMembershipRoles(ctx.deps.db, [membership.id]));
};

export const updateProjectGroup = async (
  ctx: RequestContext,
  projectId: string,
  groupId: string,
  roles: RoleAssignmentInput[],
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "edit", "groups");
  const membership = await requireMembership(ctx, permission, groupId);
  await assertCurrentRolesWithinActor(ctx, permission, membership.id);
  const grants = await resolveRoleGrants(ctx.deps.db, permission.project.id, roles);
  assertWithinBoundary(
    permission.ability,
    grants.flatMap((g) => g.rules),
    BOUNDARY,
  );
  await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    await replaceGroupMembershipRoles(trx, membership.id, grants);
  });
  return (await findGroupMembershipRoles(ctx.deps.db, [membership.id])).map(toMembershipRoleDto);
};

export const removeGroupFromProject = async (ctx: RequestContext, projectId: string, groupId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "delete", "groups");
  const membership = await requireMembership(ctx, permission, groupId);
  await assertCurrentRolesWithinActor(ctx, permission, membership.id);
  await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    await deleteGroupMembership(trx, membership.id);
  });
  return toGroupMembershipRowDto(membership);
};

// Used by project templates inside the project's creation transaction.
/**
 * Makes a group a member of a project with these roles, inside the caller's transaction: for
 * other modules that add groups as part of their own change (templates).
 */
export const addGroupInTransaction = (trx: Tx, projectId: string, groupId: string, grants: RoleGrant[]) =>
  insertGroupMembershipWithRoles(trx, projectId, groupId, grants);
