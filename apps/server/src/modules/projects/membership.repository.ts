import type { Database } from "../../db/database";

export type RoleGrant = {
  role: string;
  customRoleId: string | null;
  isTemporary: boolean;
  temporaryMode?: string | null;
  temporaryRange?: string | null;
  temporaryAccessStartTime?: Date | null;
  temporaryAccessEndTime?: Date | null;
};

/** Role grants as rows of a membership-roles table; identity and group memberships store them alike. */
export const roleRows = (membershipId: string, roles: RoleGrant[]) =>
  roles.map((r) => ({
    membership_id: membershipId,
    role: r.role,
    custom_role_id: r.customRoleId,
    is_temporary: r.isTemporary,
    temporary_mode: r.isTemporary ? (r.temporaryMode ?? "relative") : null,
    temporary_range: r.isTemporary ? (r.temporaryRange ?? null) : null,
    temporary_access_start_time: r.isTemporary ? (r.temporaryAccessStartTime ?? null) : null,
    temporary_access_end_time: r.isTemporary ? (r.temporaryAccessEndTime ?? null) : null,
  }));

export const insertMembershipWithRoles = async (
  db: Database,
  projectId: string,
  identityId: string,
  roles: RoleGrant[],
) => {
  const { id } = await db
    .insertInto("identity_project_memberships")
    .values({ project_id: projectId, identity_id: identityId })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db.insertInto("identity_project_membership_roles").values(roleRows(id, roles)).execute();
  return id;
};

export const replaceMembershipRoles = async (db: Database, membershipId: string, roles: RoleGrant[]) => {
  await db.deleteFrom("identity_project_membership_roles").where("membership_id", "=", membershipId).execute();
  await db.insertInto("identity_project_membership_roles").values(roleRows(membershipId, roles)).execute();
  await db
    .updateTable("identity_project_memberships")
    .set({ updated_at: new Date() })
    .where("id", "=", membershipId)
    .execute();
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

/** Identity and group memberships keep their roles in tables of one shape (MembershipRoleColumns). */
export type MembershipRoleTable = "identity_project_membership_roles" | "group_project_membership_roles";

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

export const selectIdentityMemberships = (db: Database, projectId: string) =>
  db
    .selectFrom("identity_project_memberships as m")
    .innerJoin("identities as i", "i.id", "m.identity_id")
    .select(["m.id", "m.identity_id", "m.project_id", "m.created_at", "m.updated_at", "i.name as identity_name"])
    .where("m.project_id", "=", projectId);

export type IdentityMembershipRow = Awaited<
  ReturnType<ReturnType<typeof selectIdentityMemberships>["executeTakeFirstOrThrow"]>
>;

export const authMethodsOf = async (db: Database, identityIds: string[]) => {
  if (identityIds.length === 0) return new Map<string, string[]>();
  const rows = await db
    .selectFrom("identity_auth_configs")
    .select(["identity_id", "method"])
    .where("identity_id", "in", identityIds)
    .orderBy("method")
    .execute();
  const map = new Map<string, string[]>();
  for (const row of rows) map.set(row.identity_id, [...(map.get(row.identity_id) ?? []), row.method]);
  return map;
};
