import type { PermissionRuleInput, PrivilegeType } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { NotFoundError } from "../../errors";
import type { PermissionRule } from "../../permissions";
import { assertCan } from "../authz/guard";
import { getProjectPermission, getProjectPermissionBySlug } from "../authz/project-access";
import { assertValidCombination } from "../roles/roles.service";
import { toPrivilegeDto } from "./privilege.dto";
import { findPrivilegeBySlug, listPrivileges } from "./privileges.repository";
import {
  assertTargetMember,
  createPrivilege,
  deletePrivilege,
  requirePrivilegeById,
  updatePrivilege,
  windowOf,
} from "./privileges.service";

/** v2 over the shared privilege service: privileges addressed by id and project id. */
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
  const row = await createPrivilege(ctx, permission, {
    identityId: body.identityId,
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
  const { row, permission } = await requirePrivilegeById(ctx, id);
  const updated = await updatePrivilege(ctx, permission, row, {
    slug: body.slug,
    rules: body.permissions as PermissionRule[] | undefined,
    window: windowOf(body.type),
  });
  return toPrivilegeDto(updated);
};

export const getPrivilegeV2 = async (ctx: RequestContext, id: string) => {
  const { row, permission } = await requirePrivilegeById(ctx, id);
  assertCan(permission.ability, "read", "identity", { identityId: row.identity_id });
  return toPrivilegeDto(row);
};

export const deletePrivilegeV2 = async (ctx: RequestContext, id: string) => {
  const { row, permission } = await requirePrivilegeById(ctx, id);
  return toPrivilegeDto(await deletePrivilege(ctx, permission, row));
};

export const getPrivilegeBySlugV2 = async (
  ctx: RequestContext,
  slug: string,
  query: { identityId: string; projectSlug: string },
) => {
  const permission = await getProjectPermissionBySlug(ctx, query.projectSlug);
  assertCan(permission.ability, "read", "identity", { identityId: query.identityId });
  await assertTargetMember(ctx, permission.project.id, query.identityId);
  const row = await findPrivilegeBySlug(ctx.deps.db, permission.project.id, query.identityId, slug);
  if (!row) throw new NotFoundError(`Additional privilege with name ${slug} doesn't exist`);
  return toPrivilegeDto(row);
};

export const listPrivilegesV2 = async (ctx: RequestContext, query: { identityId: string; projectId: string }) => {
  const permission = await getProjectPermission(ctx, query.projectId);
  assertCan(permission.ability, "read", "identity", { identityId: query.identityId });
  await assertTargetMember(ctx, permission.project.id, query.identityId);
  const rows = await listPrivileges(ctx.deps.db, permission.project.id, query.identityId);
  return rows.map((row) => toPrivilegeDto(row));
};
