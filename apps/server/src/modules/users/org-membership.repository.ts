import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

/** People's memberships of organizations: invitations, roles, activity, the names an organization gives them. */

/** The names a person goes by in one organization: what it was told, else their own. */
export const memberFirstName = sql<string>`coalesce(om.first_name, u.first_name)`.as("first_name");
export const memberLastName = sql<string>`coalesce(om.last_name, u.last_name)`.as("last_name");

const MEMBERSHIP_COLUMNS = [
  "om.id",
  "om.org_id",
  "om.user_id",
  "om.role",
  "om.status",
  "om.is_active",
  "om.invite_email",
  "om.invite_expires_at",
  "om.invited_project_ids",
  "om.created_at",
  "om.updated_at",
  "u.username",
  "u.email",
  memberFirstName,
  memberLastName,
] as const;

const memberships = (db: Database | Tx) =>
  db.selectFrom("org_user_memberships as om").leftJoin("users as u", "u.id", "om.user_id").select(MEMBERSHIP_COLUMNS);

export const listOrgMemberships = (db: Database, orgId: string) =>
  memberships(db).where("om.org_id", "=", orgId).orderBy("om.created_at").orderBy("om.id").execute();

export type OrgMembershipRow = Awaited<ReturnType<typeof listOrgMemberships>>[number];

export const findOrgMembership = (db: Database | Tx, orgId: string, membershipId: string) =>
  memberships(db).where("om.org_id", "=", orgId).where("om.id", "=", membershipId).executeTakeFirst();

export const findOrgMembershipOfUser = (db: Database | Tx, orgId: string, userId: string) =>
  memberships(db).where("om.org_id", "=", orgId).where("om.user_id", "=", userId).executeTakeFirst();

/** The pending invitation of an e-mail to an organization, locked while it is claimed. */
export const lockInvitation = (trx: Tx, orgId: string, email: string) =>
  trx
    .selectFrom("org_user_memberships")
    .select(["id", "role", "invite_expires_at", "invited_project_ids"])
    .where("org_id", "=", orgId)
    .where("status", "=", "invited")
    .where(sql<boolean>`lower(invite_email) = ${email.toLowerCase()}`)
    .forUpdate()
    .executeTakeFirst();

export const acceptInvitation = (trx: Tx, membershipId: string, userId: string) =>
  trx
    .updateTable("org_user_memberships")
    .set({ status: "accepted", user_id: userId, updated_at: new Date() })
    .where("id", "=", membershipId)
    .execute();

export const upsertInvitation = (
  trx: Tx,
  values: { orgId: string; email: string; role: string; expiresAt: Date; projectIds: string[] },
) =>
  trx
    .insertInto("org_user_memberships")
    .values({
      org_id: values.orgId,
      user_id: null,
      role: values.role,
      status: "invited",
      invite_email: values.email,
      invite_expires_at: values.expiresAt,
      invited_project_ids: JSON.stringify(values.projectIds),
      last_invited_at: new Date(),
    })
    .onConflict((oc) =>
      oc
        .expression(sql`org_id, lower(invite_email)`)
        // A literal, not a parameter: PostgreSQL matches the partial unique index by proving this predicate
        // implies the index's, which it cannot do for a parameter once a named statement's plan is generic.
        .where("status", "=", sql.lit("invited"))
        .doUpdateSet({
          role: values.role,
          invite_expires_at: values.expiresAt,
          invited_project_ids: JSON.stringify(values.projectIds),
          last_invited_at: new Date(),
          updated_at: new Date(),
        }),
    )
    .returning("id")
    .executeTakeFirstOrThrow();

export const insertOrgMembership = (trx: Tx, orgId: string, userId: string, role: string) =>
  trx
    .insertInto("org_user_memberships")
    .values({ org_id: orgId, user_id: userId, role, status: "accepted" })
    .returning("id")
    .executeTakeFirstOrThrow();

export const updateOrgMembershipRow = (trx: Tx, membershipId: string, values: { role?: string; isActive?: boolean }) =>
  trx
    .updateTable("org_user_memberships")
    .set({
      ...(values.role !== undefined ? { role: values.role } : {}),
      ...(values.isActive !== undefined ? { is_active: values.isActive } : {}),
      updated_at: new Date(),
    })
    .where("id", "=", membershipId)
    .execute();

/**
 * The organization's admin memberships, locked: every change that could take an admin's rights
 * (deactivation, a new role, removal) queues here, so two admins cannot remove each other at once.
 */
export const lockOrgAdmins = (trx: Tx, orgId: string) =>
  trx
    .selectFrom("org_user_memberships")
    .select(["id", "user_id", "status", "is_active"])
    .where("org_id", "=", orgId)
    .where("role", "=", "admin")
    .orderBy("id")
    .forUpdate()
    .execute();

export const deleteOrgMembershipRow = (trx: Tx, membershipId: string) =>
  trx.deleteFrom("org_user_memberships").where("id", "=", membershipId).execute();

export const deleteUserGroupMembershipsInOrg = (trx: Tx, orgId: string, userId: string) =>
  trx
    .deleteFrom("group_user_members")
    .where("user_id", "=", userId)
    .where("group_id", "in", trx.selectFrom("groups").select("id").where("org_id", "=", orgId))
    .execute();

/** The names one organization gives a person: they show in that organization only. */
export const updateMemberNames = (
  trx: Tx,
  orgId: string,
  userId: string,
  values: { firstName: string; lastName: string },
) =>
  trx
    .updateTable("org_user_memberships")
    .set({ first_name: values.firstName, last_name: values.lastName, updated_at: new Date() })
    .where("org_id", "=", orgId)
    .where("user_id", "=", userId)
    .execute();

/** Whether the person holds a membership (accepted or not) of any organization but this one. */
export const belongsElsewhere = async (db: Database | Tx, userId: string, orgId: string) =>
  (await db
    .selectFrom("org_user_memberships")
    .select("id")
    .where("user_id", "=", userId)
    .where("org_id", "!=", orgId)
    .limit(1)
    .executeTakeFirst()) !== undefined;

export const listUserGroupIdsInOrg = async (trx: Tx, orgId: string, userId: string) =>
  (
    await trx
      .selectFrom("group_user_members as gm")
      .innerJoin("groups as g", "g.id", "gm.group_id")
      .select("gm.group_id")
      .where("gm.user_id", "=", userId)
      .where("g.org_id", "=", orgId)
      .execute()
  ).map((r) => r.group_id);
