import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { roleRows, type RoleGrant } from "../authz/membership-roles";

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

export const findIdentityMembership = (db: Database, projectId: string, identityId: string) =>
  selectIdentityMemberships(db, projectId).where("m.identity_id", "=", identityId).executeTakeFirst();

export const listIdentityMembershipsPage = (db: Database, projectId: string, offset: number, limit: number) =>
  selectIdentityMemberships(db, projectId)
    .orderBy("m.created_at")
    .orderBy("m.id")
    .offset(offset)
    .limit(limit)
    .execute();

export const countIdentityMemberships = (db: Database, projectId: string) =>
  db
    .selectFrom("identity_project_memberships")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();

export const deleteIdentityMembershipRow = (trx: Tx, membershipId: string) =>
  trx.deleteFrom("identity_project_memberships").where("id", "=", membershipId).execute();

/** The project's custom roles among these slugs. */
export const findProjectRolesBySlugs = (db: Database, projectId: string, slugs: string[]) =>
  db
    .selectFrom("project_roles")
    .select(["id", "slug", "permissions"])
    .where("project_id", "=", projectId)
    .where("slug", "in", slugs)
    .execute();

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
