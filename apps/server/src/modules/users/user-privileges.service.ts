import type { PermissionRuleInput, PrivilegeType } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { inTransaction } from "../../db/transaction";
import { BadRequestError, NotFoundError } from "../../errors";
import type { PermissionRule } from "../../permissions";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { getProjectPermission } from "../authz/project-access";
import { loadProjectAccessById } from "../authz/project-access.repository";
import { abilityOfGrants, toGrants } from "../authz/grants";
import { generatePrivilegeSlug } from "../privileges/privilege-slug";
import { toPrivilegeDto } from "../privileges/privilege.dto";
import { REQUESTED_PRIVILEGE_MESSAGE, windowOf, type PrivilegeWindow } from "../privileges/privileges.service";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { assertValidCombination } from "../roles/roles.service";
import {
  deleteUserPrivilegeOfRequest,
  deleteUserPrivilegeRow,
  findUserMembershipInOrg,
  findUserPrivilegeInOrg,
  insertUserPrivilege,
  listUserPrivilegesOfMembership,
  listUserPrivilegesOfRequests,
  updateUserPrivilegeRow,
  type UserPrivilegeRow,
} from "./user-privilege.repository";

/**
 * A person's additional privileges: the identity privileges' rules for people. Managing them is
 * editing the project's members, and nobody grants (or takes away) more than they hold: the caller
 * must hold the person's current rules and the privilege's.
 */

const toDto = (row: UserPrivilegeRow) => ({ ...toPrivilegeDto(row), userId: row.user_id, projectId: row.project_id });

const requireMembership = async (ctx: RequestContext, membershipId: string) => {
  const membership = isUuid(membershipId)
    ? await findUserMembershipInOrg(ctx.deps.db, ctx.actor.orgId, membershipId)
    : undefined;
  if (!membership) throw new NotFoundError(`Project membership with ID ${membershipId} not found`);
  return membership;
};

const requirePrivilege = async (ctx: RequestContext, privilegeId: string) => {
  const row = isUuid(privilegeId) ? await findUserPrivilegeInOrg(ctx.deps.db, ctx.actor.orgId, privilegeId) : undefined;
  if (!row) throw new NotFoundError(`Privilege with id ${privilegeId} not found`);
  return row;
};

/** The person's active rules in the project now. */
const rulesOfPerson = async (ctx: RequestContext, projectId: string, userId: string) => {
  const row = await loadProjectAccessById(ctx.deps.db, projectId, { type: "user", id: userId });
  return row ? abilityOfGrants(toGrants(row.grants)).rules : [];
};

const permissionToManage = async (ctx: RequestContext, projectId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "edit", "member");
  return permission;
};

const changing = <T>(ctx: RequestContext, projectId: string, write: Parameters<typeof inTransaction<T>>[1]) =>
  inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [projectId]);
    return write(trx);
  });

/** A privilege an access request granted changes only through the request (revoke). */
const assertNotRequested = (row: UserPrivilegeRow) => {
  if (row.access_request_id !== null) throw new BadRequestError(REQUESTED_PRIVILEGE_MESSAGE);
};

/**
 * An approved access request's privilege for a person, written in the approval's transaction
 * (which has bumped the project's permission version first).
 */
export const grantRequestedUserPrivilege = (
  trx: Tx,
  input: {
    projectId: string;
    userId: string;
    membershipId: string;
    rules: PermissionRule[];
    window: PrivilegeWindow;
    requestId: string;
  },
) =>
  insertUserPrivilege(trx, {
    ...input.window,
    slug: `requested-privilege-${generatePrivilegeSlug()}`,
    membership_id: input.membershipId,
    user_id: input.userId,
    project_id: input.projectId,
    permissions: JSON.stringify(input.rules),
    access_request_id: input.requestId,
  });

/** Revoking a request: its privilege goes (the caller bumps the permission version first). */
export const revokeRequestedUserPrivilege = (trx: Tx, requestId: string) =>
  deleteUserPrivilegeOfRequest(trx, requestId);

/** The person privileges approved requests granted. */
export const listRequestedUserPrivileges = (db: Database, requestIds: readonly string[]) =>
  listUserPrivilegesOfRequests(db, requestIds);

export const createUserPrivilege = async (
  ctx: RequestContext,
  body: { projectMembershipId: string; slug?: string; permissions: PermissionRuleInput[]; type: PrivilegeType },
) => {
  assertValidCombination(body.permissions);
  const membership = await requireMembership(ctx, body.projectMembershipId);
  const permission = await permissionToManage(ctx, membership.project_id);
  const rules = body.permissions as PermissionRule[];
  assertWithinBoundary(
    permission.ability,
    [...(await rulesOfPerson(ctx, membership.project_id, membership.user_id)), ...rules],
    "Failed to create additional privileges",
  );
  const slug = body.slug ?? generatePrivilegeSlug();
  ctx.scope?.note({ metadata: { userId: membership.user_id, slug } });
  try {
    const row = await changing(ctx, membership.project_id, (trx) =>
      insertUserPrivilege(trx, {
        ...windowOf(body.type),
        slug,
        membership_id: membership.id,
        user_id: membership.user_id,
        project_id: membership.project_id,
        permissions: JSON.stringify(rules),
      }),
    );
    return toDto(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(`Additional privilege with name ${slug} exists`);
    throw error;
  }
};

export const updateUserPrivilege = async (
  ctx: RequestContext,
  privilegeId: string,
  body: { slug?: string; permissions?: PermissionRuleInput[]; type?: PrivilegeType },
) => {
  assertValidCombination(body.permissions);
  const row = await requirePrivilege(ctx, privilegeId);
  const permission = await permissionToManage(ctx, row.project_id);
  assertNotRequested(row);
  // Stored rules count even while inactive: re-timing an expired privilege could revive them.
  const granted = (body.permissions ?? row.permissions) as PermissionRule[];
  assertWithinBoundary(
    permission.ability,
    [...(await rulesOfPerson(ctx, row.project_id, row.user_id)), ...granted],
    "Failed to update additional privileges",
  );
  ctx.scope?.note({ metadata: { privilegeId: row.id, userId: row.user_id, slug: body.slug ?? row.slug } });
  try {
    const updated = await changing(ctx, row.project_id, (trx) =>
      updateUserPrivilegeRow(trx, row.id, {
        ...(body.slug !== undefined ? { slug: body.slug } : {}),
        ...(body.permissions !== undefined ? { permissions: JSON.stringify(body.permissions) } : {}),
        ...(body.type !== undefined ? windowOf(body.type) : {}),
      }),
    );
    return toDto(updated);
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError("Additional privilege with provided slug already exists");
    throw error;
  }
};

export const deleteUserPrivilege = async (ctx: RequestContext, privilegeId: string) => {
  const row = await requirePrivilege(ctx, privilegeId);
  const permission = await permissionToManage(ctx, row.project_id);
  assertNotRequested(row);
  assertWithinBoundary(
    permission.ability,
    [...(await rulesOfPerson(ctx, row.project_id, row.user_id)), ...(row.permissions as PermissionRule[])],
    "Failed to delete additional privileges",
  );
  ctx.scope?.note({ metadata: { privilegeId: row.id, userId: row.user_id, slug: row.slug } });
  await changing(ctx, row.project_id, (trx) => deleteUserPrivilegeRow(trx, row.id));
  return toDto(row);
};

export const getUserPrivilege = async (ctx: RequestContext, privilegeId: string) => {
  const row = await requirePrivilege(ctx, privilegeId);
  assertCan((await getProjectPermission(ctx, row.project_id)).ability, "read", "member");
  return toDto(row);
};

export const listUserPrivileges = async (ctx: RequestContext, membershipId: string) => {
  const membership = await requireMembership(ctx, membershipId);
  assertCan((await getProjectPermission(ctx, membership.project_id)).ability, "read", "member");
  return (await listUserPrivilegesOfMembership(ctx.deps.db, membership.id)).map((row) => {
    const { permissions: _rules, ...dto } = toDto(row);
    return { ...dto, isLinkedToAccessApproval: row.access_request_id !== null };
  });
};
