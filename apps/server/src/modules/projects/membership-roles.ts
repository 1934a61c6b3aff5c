import { parseDuration, type MembershipRole, type RoleAssignmentInput } from "@keyward/contract";
import type { Database } from "../../db/database";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { PROJECT_ROLE_RULES, isBuiltInProjectRole, type PermissionRule } from "../../permissions";
import type { RoleGrant } from "../authz/membership-roles";
import { findProjectRolesBySlugs } from "./membership.repository";

export type ResolvedRoleGrant = RoleGrant & { rules: PermissionRule[] };

/**
 * Turn requested role assignments into grants: built-in slugs or the project's custom roles, and
 * temporary windows computed as start + range.
 */
export const resolveRoleGrants = async (
  db: Database,
  projectId: string,
  roles: RoleAssignmentInput[],
): Promise<ResolvedRoleGrant[]> => {
  const customSlugs = roles.map((r) => r.role).filter((slug) => !isBuiltInProjectRole(slug));
  const custom = customSlugs.length ? await findProjectRolesBySlugs(db, projectId, customSlugs) : [];
  const bySlug = new Map(custom.map((r) => [r.slug, r]));
  return roles.map((input) => {
    const customRole = bySlug.get(input.role);
    if (!isBuiltInProjectRole(input.role) && !customRole) {
      throw new BadRequestError(`Project role with slug ${input.role} not found`);
    }
    const base = {
      role: customRole ? "custom" : input.role,
      customRoleId: customRole?.id ?? null,
      rules: customRole ? (customRole.permissions as PermissionRule[]) : PROJECT_ROLE_RULES[input.role]!,
    };
    if (!input.isTemporary) return { ...base, isTemporary: false };
    const start = new Date(input.temporaryAccessStartTime);
    return {
      ...base,
      isTemporary: true,
      temporaryMode: input.temporaryMode,
      temporaryRange: input.temporaryRange,
      temporaryAccessStartTime: start,
      temporaryAccessEndTime: new Date(start.getTime() + parseDuration(input.temporaryRange)!),
    };
  });
};

export const toMembershipRoleDto = (row: {
  id: string;
  role: string;
  custom_role_id: string | null;
  custom_role_name: string | null;
  custom_role_slug: string | null;
  is_temporary: boolean;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | string | null;
  temporary_access_end_time: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}): MembershipRole => ({
  id: row.id,
  role: row.role,
  customRoleId: row.custom_role_id,
  customRoleName: row.custom_role_name,
  customRoleSlug: row.custom_role_slug,
  isTemporary: row.is_temporary,
  temporaryMode: row.temporary_mode,
  temporaryRange: row.temporary_range,
  temporaryAccessStartTime: toIso(row.temporary_access_start_time),
  temporaryAccessEndTime: toIso(row.temporary_access_end_time),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});
