import type { Database } from "../../db/database";

/*
 * Role grants of project memberships: identity and group memberships store them alike, and they are
 * what abilities are built from, so the projects and groups modules share these queries here.
 */

export type RoleGrant = {
  role: string;
  customRoleId: string | null;
  isTemporary: boolean;
  temporaryMode?: string | null;
  temporaryRange?: string | null;
  temporaryAccessStartTime?: Date | null;
  temporaryAccessEndTime?: Date | null;
};

export const MEMBERSHIP_ROLE_COLUMNS = [
  "r.id",
  "r.role",
  "r.custom_role_id",
  "pr.name as custom_role_name",
  "pr.slug as custom_role_slug",
  "r.is_temporary",
  "r.temporary_mode",
  "r.temporary_range",
  "r.temporary_access_start_time",
  "r.temporary_access_end_time",
  "r.created_at",
  "r.updated_at",
] as const;

/** Identity, person and group memberships keep their roles in tables of one shape (MembershipRoleColumns). */
export type MembershipRoleTable =
  "identity_project_membership_roles" | "project_user_membership_roles" | "group_project_membership_roles";

export const findMembershipRoles = (
  db: Database,
  membershipIds: string[],
  table: MembershipRoleTable = "identity_project_membership_roles",
) =>
  membershipIds.length === 0
    ? Promise.resolve([])
    : db
        // Both tables have the same columns, so typing the query by one of them is exact for either.
        .selectFrom(`${table} as r` as "identity_project_membership_roles as r")
        .leftJoin("project_roles as pr", "pr.id", "r.custom_role_id")
        .select(["r.membership_id", ...MEMBERSHIP_ROLE_COLUMNS])
        .where("r.membership_id", "in", membershipIds)
        .orderBy("r.created_at")
        .orderBy("r.id")
        .execute();

export type MembershipRoleRow = Awaited<ReturnType<typeof findMembershipRoles>>[number];
