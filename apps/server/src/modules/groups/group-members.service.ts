import { orgPersonByName } from "../authz/principals";
import { inTransaction } from "../../db/transaction";
import type { RequestContext } from "../../context";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import { orgRoleCovers } from "../../permissions";
import { orgAbilityOf } from "../authz/org-access";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersionForGroup } from "../authz/permission-version";
import { requireIdentity } from "../authz/identity-lookup";
import { toGroupUserDto } from "./group.dto";
import {
  deleteIdentityMember,
  deleteUserMember,
  insertIdentityMember,
  insertUserMember,
  listGroupIdentities,
  listGroupUsers,
  type GroupRow,
} from "./group.repository";
import { requireGroup } from "./group.service";

type MembersQuery = { offset: number; limit: number; search?: string; filter?: "existingMembers" | "nonMembers" };

/** Members change only with edit on groups, and only in groups no more privileged than the actor. */
const requireEditableGroup = async (ctx: RequestContext, groupId: string, action: string) => {
  assertCan(orgAbilityOf(ctx.actor), "edit", "groups");
  const group = await requireGroup(ctx, groupId);
  if (!orgRoleCovers(ctx.actor.orgRole, group.role))
    throw new ForbiddenError(`Failed to ${action} more privileged group`);
  return group;
};

const requireOrgUser = async (ctx: RequestContext, username: string) => {
  const user = await orgPersonByName(ctx.deps.db, ctx.actor.orgId, username);
  if (!user) throw new NotFoundError(`Failed to find user with username ${username}`);
  return user;
};

/** Every change of who is in a group reaches the projects the group belongs to. */
const changingGroup = (
  ctx: RequestContext,
  group: GroupRow,
  change: (trx: RequestContext["deps"]["db"]) => Promise<boolean | void>,
) =>
  inTransaction(ctx, async (trx) => {
    await bumpPermissionVersionForGroup(trx, group.id);
    return change(trx);
  });

export const listGroupUserMembers = async (
  ctx: RequestContext,
  groupId: string,
  query: MembersQuery & { username?: string },
) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "groups");
  const group = await requireGroup(ctx, groupId);
  const { rows, totalCount } = await listGroupUsers(ctx.deps.db, ctx.actor.orgId, group.id, query);
  return {
    users: rows.map((row) => ({
      ...toGroupUserDto(row),
      isPartOfGroup: row.member_id !== null,
      joinedGroupAt: toIso(row.joined_at),
    })),
    totalCount,
  };
};

export const listGroupIdentityMembers = async (ctx: RequestContext, groupId: string, query: MembersQuery) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "groups");
  const group = await requireGroup(ctx, groupId);
  const { rows, totalCount } = await listGroupIdentities(ctx.deps.db, ctx.actor.orgId, group.id, query);
  return {
    machineIdentities: rows.map((row) => ({
      id: row.id,
      name: row.name,
      isPartOfGroup: row.member_id !== null,
      joinedGroupAt: toIso(row.joined_at),
    })),
    totalCount,
  };
};

export const addUserToGroup = async (ctx: RequestContext, groupId: string, username: string) => {
  const group = await requireEditableGroup(ctx, groupId, "add user to");
  const user = await requireOrgUser(ctx, username);
  try {
    await changingGroup(ctx, group, async (trx) => {
      await insertUserMember(trx, group.id, user.id);
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new BadRequestError(`User with username ${username} is already part of the group`);
    throw error;
  }
  return toGroupUserDto(user);
};

export const removeUserFromGroup = async (ctx: RequestContext, groupId: string, username: string) => {
  const group = await requireEditableGroup(ctx, groupId, "delete user from");
  const user = await requireOrgUser(ctx, username);
  const removed = await changingGroup(ctx, group, (trx) => deleteUserMember(trx, group.id, user.id));
  if (!removed) throw new NotFoundError(`User with username ${username} is not a member of the group`);
  return toGroupUserDto(user);
};

export const addIdentityToGroup = async (ctx: RequestContext, groupId: string, identityId: string) => {
  const group = await requireEditableGroup(ctx, groupId, "add identity to");
  const identity = await requireIdentity(ctx, identityId);
  // A project-owned identity must never reach other projects through a group.
  if (identity.project_id !== null) throw new BadRequestError("A project-owned identity cannot be a member of a group");
  try {
    await changingGroup(ctx, group, async (trx) => {
      await insertIdentityMember(trx, group.id, identity.id);
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new BadRequestError(`Identity with ID ${identityId} is already part of the group`);
    throw error;
  }
  return { id: identity.id };
};

export const removeIdentityFromGroup = async (ctx: RequestContext, groupId: string, identityId: string) => {
  const group = await requireEditableGroup(ctx, groupId, "delete identity from");
  const identity = await requireIdentity(ctx, identityId);
  const removed = await changingGroup(ctx, group, (trx) => deleteIdentityMember(trx, group.id, identity.id));
  if (!removed) throw new NotFoundError(`Identity with ID ${identityId} is not a member of the group`);
  return { id: identity.id };
};
