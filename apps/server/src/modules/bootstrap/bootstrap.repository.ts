import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

/** Whether the instance has been set up: the instance_config row exists. */
export const isInstanceInitialized = async (db: Database) =>
  (await db.selectFrom("instance_config").select("id").executeTakeFirst()) !== undefined;

/** The instance_config row, locked: two first set-ups wait on each other. */
export const lockInstanceConfig = (trx: Tx) =>
  trx.selectFrom("instance_config").select("id").forUpdate().executeTakeFirst();

export const insertInstanceConfig = (trx: Tx, adminUserId: string, adminIdentityId: string) =>
  trx
    .insertInto("instance_config")
    .values({ id: 1, admin_user_id: adminUserId, admin_identity_id: adminIdentityId })
    .execute();

export const insertOrganization = (trx: Tx, name: string, slug: string) =>
  trx.insertInto("organizations").values({ name, slug }).returning(["id", "name", "slug"]).executeTakeFirstOrThrow();

/**
 * The instance's first person, an admin of its first organization. They sign in once the
 * organization's single sign-on is configured, with a provider that vouches for this e-mail.
 */
export const insertAdminUser = async (trx: Tx, email: string, orgId: string) => {
  const user = await trx
    .insertInto("users")
    .values({
      username: email,
      email,
      first_name: "Admin",
      last_name: "User",
      super_admin: true,
      password_hash: null,
      is_email_verified: false,
    })
    .returning(["id", "username", "email", "first_name", "last_name", "super_admin"])
    .executeTakeFirstOrThrow();
  await trx.insertInto("org_user_memberships").values({ org_id: orgId, user_id: user.id, role: "admin" }).execute();
  return user;
};
