import type { Database } from "../../db/database";

/**
 * Who a principal is, for every module that must know before it acts: an identity of an organization,
 * and whether an identity is the instance's admin.
 */
export const findIdentityInOrg = (db: Database, orgId: string, identityId: string) =>
  db
    .selectFrom("identities")
    .select(["id", "name", "org_id", "project_id", "org_role", "has_delete_protection"])
    .where("id", "=", identityId)
    .where("org_id", "=", orgId)
    .executeTakeFirst();

export type IdentityRow = NonNullable<Awaited<ReturnType<typeof findIdentityInOrg>>>;

export const isInstanceAdminIdentity = async (db: Database, identityId: string) =>
  (await db
    .selectFrom("instance_config")
    .select("id")
    .where("admin_identity_id", "=", identityId)
    .executeTakeFirst()) !== undefined;
