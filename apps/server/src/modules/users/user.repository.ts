import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

/** People (one row per e-mail) and the provider logins (aliases) linked to them per organization. */

const USER_COLUMNS = [
  "u.id",
  "u.username",
  "u.email",
  "u.first_name",
  "u.last_name",
  "u.super_admin",
  "u.is_email_verified",
  "u.is_active",
  "u.created_at",
  "u.updated_at",
] as const;

export const findUserById = (db: Database, userId: string) =>
  db.selectFrom("users as u").select(USER_COLUMNS).where("u.id", "=", userId).executeTakeFirst();

export type UserRow = NonNullable<Awaited<ReturnType<typeof findUserById>>>;

export const findUserByEmail = (db: Database, email: string) =>
  db
    .selectFrom("users as u")
    .select(USER_COLUMNS)
    .where(sql<boolean>`lower(u.email) = ${email.toLowerCase()}`)
    .executeTakeFirst();

export const insertUser = (
  trx: Tx,
  values: { email: string; firstName: string; lastName: string; isEmailVerified: boolean },
) =>
  trx
    .insertInto("users")
    .values({
      username: values.email,
      email: values.email,
      first_name: values.firstName,
      last_name: values.lastName,
      is_email_verified: values.isEmailVerified,
      password_hash: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();

/** A provider vouched for the person's address (after they proved it where they were known elsewhere). */
export const markEmailVerified = (trx: Tx, userId: string) =>
  trx.updateTable("users").set({ is_email_verified: true, updated_at: new Date() }).where("id", "=", userId).execute();

export const findAlias = (db: Database | Tx, orgId: string, aliasType: string, externalId: string) =>
  db
    .selectFrom("user_aliases")
    .select(["id", "user_id"])
    .where("org_id", "=", orgId)
    .where("alias_type", "=", aliasType)
    .where("external_id", "=", externalId)
    .executeTakeFirst();

export const insertAlias = (
  trx: Tx,
  values: { userId: string; orgId: string; aliasType: string; externalId: string },
) =>
  trx
    .insertInto("user_aliases")
    .values({
      user_id: values.userId,
      org_id: values.orgId,
      alias_type: values.aliasType,
      external_id: values.externalId,
    })
    .onConflict((oc) => oc.columns(["org_id", "alias_type", "external_id"]).doNothing())
    .execute();

export const listAliasTypesOfUser = async (db: Database, userId: string) =>
  (await db.selectFrom("user_aliases").select("alias_type").distinct().where("user_id", "=", userId).execute()).map(
    (r) => r.alias_type,
  );

export const deleteAliasesOfUser = (trx: Tx, orgId: string, userId: string, aliasType: string) =>
  trx
    .deleteFrom("user_aliases")
    .where("org_id", "=", orgId)
    .where("user_id", "=", userId)
    .where("alias_type", "=", aliasType)
    .execute();
