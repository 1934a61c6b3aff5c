import type { Database } from "../../db/database";
import { roleRows, type RoleGrant } from "../authz/membership-roles.repository";

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
