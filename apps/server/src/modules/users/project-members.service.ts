import type { RequestContext } from "../../context";
import { inTransaction, type Tx } from "../../db/transaction";
import type { RoleGrant } from "../authz/membership-roles";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { getProjectPermission } from "../authz/project-access";
import { membershipRolesOf } from "../authz/membership-roles";
import { resolveRoleGrants, toMembershipRoleDto } from "../projects/membership-roles";
import {
  deleteUserProjectMemberships,
  insertUserProjectMembership,
  listUserProjectMemberships,
} from "./project-membership.repository";
import { orgPeopleByNames } from "../authz/principals";

/** People named by e-mail or username, who must all be members of the project's organization. */
const orgMembersNamed = async (ctx: RequestContext, orgId: string, names: string[]) => {
  const byName = await orgPeopleByNames(ctx.deps.db, orgId, names);
  if (names.some((name) => !byName.has(name))) throw new BadRequestError("Some users are not part of org");
  return [...new Map([...byName.values()].map((u) => [u.id, u])).values()];
};

const toMembershipRef = (row: { id: string; user_id: string; project_id: string; created_at: Date }) => ({
  id: row.id,
  userId: row.user_id,
  projectId: row.project_id,
  createdAt: toIso(row.created_at),
});

/** The person who creates a project becomes its member with these roles, inside the creating transaction. */
export const addProjectCreator = (trx: Tx, projectId: string, userId: string, roles: RoleGrant[]) =>
  insertUserProjectMembership(trx, projectId, userId, roles);

/**
 * The project roles a person is to hold, resolved, when the caller may add members and give them:
 * nobody grants more than they hold, whether adding a member now or inviting one who joins later.
 */
export const grantsWithinBoundary = async (
  ctx: RequestContext,
  permission: Awaited<ReturnType<typeof getProjectPermission>>,
  roleSlugs: string[],
) => {
  assertCan(permission.ability, "create", "member");
  const grants = await resolveRoleGrants(
    ctx.deps.db,
    permission.project.id,
    roleSlugs.map((role) => ({ role, isTemporary: false as const })),
  );
  assertWithinBoundary(
    permission.ability,
    grants.flatMap((g) => g.rules),
    "Failed to assign role to user",
  );
  return grants;
};

/** Add organization members to a project with roles (default `member`), within the caller's own rights. */
export const addProjectMembers = async (
  ctx: RequestContext,
  projectId: string,
  body: { emails: string[]; usernames: string[]; roleSlugs?: string[] },
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "create", "member");
  const users = await orgMembersNamed(ctx, permission.project.org_id, [...body.emails, ...body.usernames]);
  if (users.length === 0) throw new BadRequestError("Provide at least one e-mail or username");
  const grants = await grantsWithinBoundary(ctx, permission, body.roleSlugs ?? ["member"]);
  const existing = await listUserProjectMemberships(
    ctx.deps.db,
    permission.project.id,
    users.map((u) => u.id),
  );
  if (existing.length > 0) throw new BadRequestError("Some users are already part of project");
  ctx.scope?.note({ metadata: { userIds: users.map((u) => u.id), emails: users.map((u) => u.email) } });
  const memberships = await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    const rows = [];
    for (const user of users) rows.push(await insertUserProjectMembership(trx, permission.project.id, user.id, grants));
    return rows;
  });
  return memberships.map(toMembershipRef);
};

export const removeProjectMembers = async (
  ctx: RequestContext,
  projectId: string,
  body: { emails: string[]; usernames: string[] },
) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "delete", "member");
  const users = await orgMembersNamed(ctx, permission.project.org_id, [...body.emails, ...body.usernames]);
  if (users.some((u) => ctx.actor.type === "user" && u.id === ctx.actor.id)) {
    throw new BadRequestError("Cannot remove yourself from project");
  }
  const present = await listUserProjectMemberships(
    ctx.deps.db,
    permission.project.id,
    users.map((u) => u.id),
  );
  if (users.length === 0 || present.length !== users.length) {
    throw new BadRequestError("Some users are not part of project");
  }
  ctx.scope?.note({ metadata: { userIds: users.map((u) => u.id), emails: users.map((u) => u.email) } });
  const removed = await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    return deleteUserProjectMemberships(
      trx,
      permission.project.id,
      users.map((u) => u.id),
    );
  });
  return removed.map(toMembershipRef);
};

export const listProjectPeople = async (ctx: RequestContext, projectId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "member");
  const rows = await listUserProjectMemberships(ctx.deps.db, permission.project.id);
  const roles = await membershipRolesOf(
    ctx.deps.db,
    rows.map((r) => r.id),
    "project_user_membership_roles",
  );
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    user: {
      id: row.user_id,
      username: row.username,
      email: row.email,
      firstName: row.first_name,
      lastName: row.last_name,
    },
    roles: roles.filter((r) => r.membership_id === row.id).map(toMembershipRoleDto),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }));
};
