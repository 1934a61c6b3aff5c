import type { Database } from "../../db/database";
import { membershipRolesOf, roleRows, type RoleGrant } from "../authz/membership-roles";

const MEMBERSHIP_COLUMNS = [
  "m.id",
  "m.group_id",
  "m.project_id",
  "m.created_at",
  "m.updated_at",
  "g.name",
  "g.slug",
] as const;

const selectMemberships = (db: Database) =>
  db
    .selectFrom("group_project_memberships as m")
    .innerJoin("groups as g", "g.id", "m.group_id")
    .select(MEMBERSHIP_COLUMNS);

export const listProjectGroupMemberships = (db: Database, projectId: string) =>
  selectMemberships(db).where("m.project_id", "=", projectId).orderBy("m.created_at").orderBy("m.id").execute();

export const findProjectGroupMembership = (db: Database, projectId: string, groupId: string) =>
  selectMemberships(db).where("m.project_id", "=", projectId).where("m.group_id", "=", groupId).executeTakeFirst();

export type ProjectGroupMembershipRow = NonNullable<Awaited<ReturnType<typeof findProjectGroupMembership>>>;

export const findGroupMembershipRoles = (db: Database, membershipIds: string[]) =>
  membershipRolesOf(db, membershipIds, "group_project_membership_roles");

export const insertGroupMembershipWithRoles = async (
  db: Database,
  projectId: string,
  groupId: string,
  roles: RoleGrant[],
) => {
  const membership = await db
    .insertInto("group_project_memberships")
    .values({ project_id: projectId, group_id: groupId })
    .returning(["id", "group_id", "project_id", "created_at", "updated_at"])
    .executeTakeFirstOrThrow();
  if (roles.length > 0)
    await db.insertInto("group_project_membership_roles").values(roleRows(membership.id, roles)).execute();
  return membership;
};

export const replaceGroupMembershipRoles = async (db: Database, membershipId: string, roles: RoleGrant[]) => {
  await db.deleteFrom("group_project_membership_roles").where("membership_id", "=", membershipId).execute();
  await db.insertInto("group_project_membership_roles").values(roleRows(membershipId, roles)).execute();
  await db
    .updateTable("group_project_memberships")
    .set({ updated_at: new Date() })
    .where("id", "=", membershipId)
    .execute();
};

export const deleteGroupMembership = (db: Database, membershipId: string) =>
  db.deleteFrom("group_project_memberships").where("id", "=", membershipId).execute();
