import { assertActorCoversIdentity } from "../authz/identity-boundary";
import { findMembershipRoles } from "../authz/membership-roles.repository";
import { inTransaction } from "../../db/transaction";
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
  insertMembershipWithRoles,
  replaceMembershipRoles,
  selectIdentityMemberships,
  type IdentityMembershipRow,
} from "./membership.repository";

const toMembershipDtos = async (ctx: RequestContext, rows: IdentityMembershipRow[]) => {
  const roles = await findMembershipRoles(
    ctx.deps.db,
    rows.map((r) => r.id),
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
  const row = await selectIdentityMemberships(ctx.deps.db, permission.project.id)
    .where("m.identity_id", "=", identityId)
    .executeTakeFirst();
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
  const base = selectIdentityMemberships(ctx.deps.db, permission.project.id);
  const [rows, count] = await Promise.all([
    base.orderBy("m.created_at").orderBy("m.id").offset(query.offset).limit(query.limit).execute(),
    ctx.deps.db
      .selectFrom("identity_project_memberships")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("project_id", "=", permission.project.id)
      .executeTakeFirstOrThrow(),
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
    await trx.deleteFrom("identity_project_memberships").where("id", "=", membership.id).execute();
  });
  return dto!;
};

// Used by other modules inside their own transactions (project-managed identities, templates).
export { insertMembershipWithRoles } from "./membership.repository";
