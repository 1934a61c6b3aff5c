import type { PermissionRuleInput, PrivilegeType } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { NotFoundError } from "../../errors";
import type { PermissionRule } from "../../permissions";
import { getProjectPermission } from "../authz/project-access";
import { assertValidCombination } from "../roles/roles.service";
import { toPrivilegeDto } from "./privilege.dto";
import { findPersonMembershipInOrg, listPrivilegesOfPersonMembership } from "./privileges.repository";
import {
  assertMayOnHolder,
  createPrivilege,
  deletePrivilege,
  requirePrivilegeById,
  updatePrivilege,
  windowOf,
  type PrivilegeRow,
} from "./privileges.service";

/**
 * The project members' privilege routes over the shared privilege service: a person's privileges,
 * addressed by the project membership they hang off or by id.
 */

const toDto = (row: PrivilegeRow) => ({ ...toPrivilegeDto(row), userId: row.holder_id, projectId: row.project_id });

/** A person's project membership in the caller's organization, with the caller's permission in its project. */
const requireMembership = async (ctx: RequestContext, membershipId: string) => {
  const membership = isUuid(membershipId)
    ? await findPersonMembershipInOrg(ctx.deps.db, ctx.actor.orgId, membershipId)
    : undefined;
  if (!membership) throw new NotFoundError(`Project membership with ID ${membershipId} not found`);
  const permission = await getProjectPermission(ctx, membership.project_id);
  return { membership, holder: { type: "user" as const, id: membership.user_id }, permission };
};

export const createUserPrivilege = async (
  ctx: RequestContext,
  body: { projectMembershipId: string; slug?: string; permissions: PermissionRuleInput[]; type: PrivilegeType },
) => {
  assertValidCombination(body.permissions);
  const { holder, permission } = await requireMembership(ctx, body.projectMembershipId);
  const row = await createPrivilege(ctx, permission, holder, {
    slug: body.slug,
    rules: body.permissions as PermissionRule[],
    timing: body.type,
  });
  return toDto(row);
};

export const updateUserPrivilege = async (
  ctx: RequestContext,
  privilegeId: string,
  body: { slug?: string; permissions?: PermissionRuleInput[]; type?: PrivilegeType },
) => {
  assertValidCombination(body.permissions);
  const { row, holder, permission } = await requirePrivilegeById(ctx, "user", privilegeId);
  const updated = await updatePrivilege(ctx, permission, holder, row, {
    slug: body.slug,
    rules: body.permissions as PermissionRule[] | undefined,
    window: body.type !== undefined ? windowOf(body.type) : undefined,
  });
  return toDto(updated);
};

export const deleteUserPrivilege = async (ctx: RequestContext, privilegeId: string) => {
  const { row, holder, permission } = await requirePrivilegeById(ctx, "user", privilegeId);
  return toDto(await deletePrivilege(ctx, permission, holder, row));
};

export const getUserPrivilege = async (ctx: RequestContext, privilegeId: string) => {
  const { row, holder, permission } = await requirePrivilegeById(ctx, "user", privilegeId);
  assertMayOnHolder(permission.ability, "read", holder);
  return toDto(row);
};

export const listUserPrivileges = async (ctx: RequestContext, membershipId: string) => {
  const { membership, holder, permission } = await requireMembership(ctx, membershipId);
  assertMayOnHolder(permission.ability, "read", holder);
  return (await listPrivilegesOfPersonMembership(ctx.deps.db, membership.id)).map((row) => {
    const { permissions: _rules, ...dto } = toDto(row);
    return { ...dto, isLinkedToAccessApproval: row.access_request_id !== null };
  });
};
