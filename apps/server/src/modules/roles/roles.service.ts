import { inTransaction } from "../../db/transaction";
import {
  BUILT_IN_PROJECT_ROLES,
  invalidPermissionCombination,
  invalidPermissionTemplate,
  type PermissionRuleInput,
} from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isForeignKeyViolation, isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { isBuiltInProjectRole, type PermissionRule } from "../../permissions";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { getProjectPermission, type ProjectPermission } from "../authz/project-access";
import { builtInRoleDto, toRoleDto } from "./role.dto";
import {
  deleteRoleRow,
  findRoleById,
  findRoleBySlug,
  insertRole,
  isRoleInUse,
  listRoles,
  updateRoleRow,
} from "./roles.repository";

type RoleBody = { slug: string; name: string; description?: string | null; permissions: PermissionRuleInput[] };
type RoleUpdate = Partial<RoleBody>;

const DUPLICATE_SLUG = "Role with same slug already exists";

/** Reference §1.1: legacy `read` combined with its replacements is a 400, before any lookup. */
export const assertValidCombination = (rules: readonly PermissionRuleInput[] | undefined) => {
  const message = rules && invalidPermissionCombination(rules);
  if (message) throw new BadRequestError(message);
};

/** v1 legacy rules expand `read` next to its replacements on purpose: only their templates are checked. */
export const assertValidTemplates = (rules: readonly PermissionRuleInput[]) => {
  const message = invalidPermissionTemplate(rules);
  if (message) throw new BadRequestError(message);
};

const requireRole = async (ctx: RequestContext, permission: ProjectPermission, roleId: string) => {
  const row = isUuid(roleId) ? await findRoleById(ctx.deps.db, permission.project.id, roleId) : undefined;
  if (!row) throw new NotFoundError(`Project role with ID ${roleId} not found`);
  return row;
};

const rethrowDuplicate = (error: unknown): never => {
  if (isUniqueViolation(error)) throw new BadRequestError(DUPLICATE_SLUG);
  throw error;
};

export const createRole = async (ctx: RequestContext, projectId: string, body: RoleBody) => {
  assertValidCombination(body.permissions);
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "create", "role");
  assertWithinBoundary(permission.ability, body.permissions as PermissionRule[], "Failed to create role");
  const row = await inTransaction(ctx, async (trx) => {
    const inserted = await insertRole(trx, {
      project_id: permission.project.id,
      name: body.name,
      slug: body.slug,
      description: body.description ?? null,
      permissions: body.permissions as PermissionRule[],
    });
    noteAudit(ctx, { metadata: { roleId: inserted.id } });
    return inserted;
  }).catch(rethrowDuplicate);
  return toRoleDto(row);
};

export const listProjectRoles = async (ctx: RequestContext, projectId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "role");
  const custom = await listRoles(ctx.deps.db, permission.project.id);
  return [...BUILT_IN_PROJECT_ROLES.map((slug) => builtInRoleDto(permission.project, slug)), ...custom.map(toRoleDto)];
};

export const getRole = async (ctx: RequestContext, projectId: string, roleId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "role");
  return toRoleDto(await requireRole(ctx, permission, roleId));
};

export const getRoleBySlug = async (ctx: RequestContext, projectId: string, slug: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "read", "role");
  if (isBuiltInProjectRole(slug)) return builtInRoleDto(permission.project, slug);
  const row = await findRoleBySlug(ctx.deps.db, permission.project.id, slug);
  if (!row) throw new NotFoundError(`Project role with slug ${slug} not found`);
  return toRoleDto(row);
};

export const updateRole = async (ctx: RequestContext, projectId: string, roleId: string, body: RoleUpdate) => {
  assertValidCombination(body.permissions);
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "edit", "role");
  const role = await requireRole(ctx, permission, roleId);
  if (body.permissions)
    assertWithinBoundary(permission.ability, body.permissions as PermissionRule[], "Failed to update role");
  const row = await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [permission.project.id]);
    return updateRoleRow(trx, role.id, {
      name: body.name,
      slug: body.slug,
      description: body.description,
      permissions: body.permissions as PermissionRule[] | undefined,
    });
  }).catch(rethrowDuplicate);
  return toRoleDto(row);
};

const ROLE_IN_USE = "The role is assigned to one or more project memberships. Unassign it before deleting the role.";

export const deleteRole = async (ctx: RequestContext, projectId: string, roleId: string) => {
  const permission = await getProjectPermission(ctx, projectId);
  assertCan(permission.ability, "delete", "role");
  const role = await requireRole(ctx, permission, roleId);
  try {
    await inTransaction(ctx, async (trx) => {
      await bumpPermissionVersion(trx, [permission.project.id]);
      if (await isRoleInUse(trx, role.id)) throw new BadRequestError(ROLE_IN_USE);
      await deleteRoleRow(trx, role.id);
    });
  } catch (error) {
    // A membership taking the role between the check and the delete trips the foreign key.
    if (isForeignKeyViolation(error)) throw new BadRequestError(ROLE_IN_USE);
    throw error;
  }
  return toRoleDto(role);
};
