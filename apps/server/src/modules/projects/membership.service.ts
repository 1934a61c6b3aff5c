import { assertActorCoversIdentity } from "../authz/identity-boundary";
import { membershipRolesOf, type RoleGrant } from "../authz/membership-roles";
import { inTransaction, type Tx } from "../../db/transaction";
import type { RoleAssignmentInput } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { getProjectPermission, type ProjectPermission } from "../authz/project-access";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { requireIdentity } from "../authz/identity-lookup";
import { resolveRoleGrants, toMembershipRoleDto } from "./membership-roles";
import {
  authMethodsOf,
  countIdentityMemberships,
  deleteIdentityMembershipRow,
  findIdentityMembership,
  insertMembershipWithRoles,
  listIdentityMembershipsPage,
  replaceMembershipRoles,
  type IdentityMembershipRow,
} from "./membership.repository";

const toMembershipDtos = async (ctx: RequestContext, rows: IdentityMembershipRow[]) => {
  const roles = await membershipRolesOf(
    ctx.deps.db,
    rows.map((r) => r.id),
    "identity_project_membership_roles",
  );
  const methods = await authMethodsOf(
    ctx.deps.db,
    rows.map((r) => r.identity_id),
  );
  return rows.map((row) => ({
    id: row.id,
    identityId: row.identity_id,
    projectId: row.project_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    roles: roles.filter((r) => r.membership_id === row.id).map(toMembershipRoleDto),
    identity: { id: row.identity_id, name: row.identity_name, authMethods: methods.get(row.identity_id) ?? [] },
  }));
};

const findMembership = async (ctx: RequestContext, permission: ProjectPermission, identityId: string) => {
  const row = await findIdentityMembership(ctx.deps.db, permission.project.id, identityId);
  if (!row)
    throw new NotFoundError(
      `Identity with ID ${identityId} is not a member of project with ID ${permission.project.id}`,
    );
  return row;
};

/** Nobody changes the memberships of an identity that holds more than they do, anywhere. */
const assertTargetWithinActor = async (ctx: RequestContext, identityId: string, message: string) =>
  assertActorCoversIdentity(ctx, await requireIdentity(ctx, identityId), message);

const normalizeRoles = (body: { role?: string; roles?: RoleAssignmentInput[] }): RoleAssignmentInput[] =>
  body.roles ?? [{ role: body.role!, isTemporary: false }];

export const addIdentityMembership = async (
  ctx: RequestContext,
  projectId: string,
  identityId: string,
  body: { role?: string; roles?: RoleAssignmentInput[] },
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "create", "identity");
  const identity = await requireIdentity(ctx, identityId);
  if (identity.project_id !== null && identity.project_id !== permission.project.id) {
    throw new BadRequestError("A project-owned identity can only be a member of its own project");
  }
  await assertActorCoversIdentity(ctx, identity, "Failed to add more privileged identity to project");
  const grants = await resolveRoleGrants(ctx.deps.db, permission.project.id, normalizeRoles(body));
  assertWithinBoundary(
    permission.ability,
    grants.flatMap((g) => g.rules),
    "Failed to assign role to identity",
  );
  try {
    await inTransaction(ctx, async (trx) => {
      await bumpPermissionVersion(trx, [permission.project.id]);
      await insertMembershipWithRoles(trx, permission.project.id, identity.id, grants);
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new BadRequestError(
        `Identity with ID ${identityId} already exists in project with ID ${permission.project.id}`,
      );
    }
    throw error;
  }
  const [dto] = await toMembershipDtos(ctx, [await findMembership(ctx, permission, identity.id)]);
  return dto!;
};

export const getIdentityMembership = async (ctx: RequestContext, projectId: string, identityId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "identity", { identityId });
  const [dto] = await toMembershipDtos(ctx, [await findMembership(ctx, permission, identityId)]);
  return dto!;
};

export const listIdentityMemberships = async (
  ctx: RequestContext,
  projectId: string,
  query: { offset: number; limit: number },
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "identity");
  const [rows, count] = await Promise.all([
    listIdentityMembershipsPage(ctx.deps.db, permission.project.id, query.offset, query.limit),
    countIdentityMemberships(ctx.deps.db, permission.project.id),
  ]);
  return { identityMemberships: await toMembershipDtos(ctx, rows), totalCount: Number(count.count) };
};

export const updateIdentityMembership = async (
  ctx: RequestContext,
  projectId: string,
  identityId: string,
  roles: RoleAssignmentInput[],
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "edit", "identity", { identityId });
  const membership = await findMembership(ctx, permission, identityId);
  await assertTargetWithinActor(ctx, identityId, "Failed to change role of more privileged identity");
  const grants = await resolveRoleGrants(ctx.deps.db, permission.project.id, roles);
  assertWithinBoundary(
    permission.ability,
    grants.flatMap((g) => g.rules),
    "Failed to update role of identity",
  );
  await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    await replaceMembershipRoles(trx, membership.id, grants);
  });
  const [dto] = await toMembershipDtos(ctx, [membership]);
  return dto!.roles;
};

export const deleteIdentityMembership = async (ctx: RequestContext, projectId: string, identityId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "delete", "identity", { identityId });
  const membership = await findMembership(ctx, permission, identityId);
  await assertTargetWithinActor(ctx, identityId, "Failed to delete more privileged identity");
  const [dto] = await toMembershipDtos(ctx, [membership]);
  await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    await deleteIdentityMembershipRow(trx, membership.id);
  });
  return dto!;
};

/**
 * Makes an identity a member of a project with these roles, inside the caller's transaction: for
 * other modules that create members as part of their own change (project-managed identities,
 * templates). The caller has checked the rights the roles need.
 */
export const addMemberInTransaction = (trx: Tx, projectId: string, identityId: string, grants: RoleGrant[]) =>
  insertMembershipWithRoles(trx, projectId, identityId, grants);
