import type { PermissionRuleInput, PrivilegeType } from "@keyward/contract";
import type { RequestContext } from "../../context";
import type { PermissionRule } from "../../permissions";
import { getProjectPermission, getProjectPermissionBySlug } from "../authz/project-access";
import { assertValidCombination } from "../roles/roles.service";
import { toPrivilegeDto } from "./privilege.dto";
import {
  assertMayOnHolder,
  createPrivilege,
  deletePrivilege,
  identity,
  readPrivilegeBySlug,
  readPrivileges,
  requirePrivilegeById,
  updatePrivilege,
  windowOf,
} from "./privileges.service";

/** v2 over the shared privilege service: an identity's privileges addressed by id and project id. */
export const createPrivilegeV2 = async (
  ctx: RequestContext,
  body: {
    identityId: string;
    projectId: string;
    slug?: string;
    permissions: PermissionRuleInput[];
    type: PrivilegeType;
  },
) => {
  assertValidCombination(body.permissions);
  const permission = await getProjectPermission(ctx, body.projectId);
  const row = await createPrivilege(ctx, permission, identity(body.identityId), {
    slug: body.slug,
    rules: body.permissions as PermissionRule[],
    timing: body.type,
  });
  return toPrivilegeDto(row);
};

export const updatePrivilegeV2 = async (
  ctx: RequestContext,
  id: string,
  body: { slug: string; permissions?: PermissionRuleInput[]; type: PrivilegeType },
) => {
  assertValidCombination(body.permissions);
  const { row, holder, permission } = await requirePrivilegeById(ctx, "identity", id);
  const updated = await updatePrivilege(ctx, permission, holder, row, {
    slug: body.slug,
    rules: body.permissions as PermissionRule[] | undefined,
    window: windowOf(body.type),
  });
  return toPrivilegeDto(updated);
};

export const getPrivilegeV2 = async (ctx: RequestContext, id: string) => {
  const { row, holder, permission } = await requirePrivilegeById(ctx, "identity", id);
  assertMayOnHolder(permission.ability, "read", holder);
  return toPrivilegeDto(row);
};

export const deletePrivilegeV2 = async (ctx: RequestContext, id: string) => {
  const { row, holder, permission } = await requirePrivilegeById(ctx, "identity", id);
  return toPrivilegeDto(await deletePrivilege(ctx, permission, holder, row));
};

export const getPrivilegeBySlugV2 = async (
  ctx: RequestContext,
  slug: string,
  query: { identityId: string; projectSlug: string },
) => {
  const permission = await getProjectPermissionBySlug(ctx, query.projectSlug);
  return toPrivilegeDto(await readPrivilegeBySlug(ctx, permission, identity(query.identityId), slug));
};

export const listPrivilegesV2 = async (ctx: RequestContext, query: { identityId: string; projectId: string }) => {
  const permission = await getProjectPermission(ctx, query.projectId);
  const rows = await readPrivileges(ctx, permission, identity(query.identityId));
  return rows.map((row) => toPrivilegeDto(row));
};
