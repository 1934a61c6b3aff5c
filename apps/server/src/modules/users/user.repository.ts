import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { findMembershipRoles, type RoleGrant } from "../authz/membership-roles.repository";
import { roleRows } from "../authz/membership-roles";

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
        .where("status", "=", "invited")
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

/** The person's project memberships in one organization's projects go with their org membership. */
export const deleteUserProjectMembershipsInOrg = (trx: Tx, orgId: string, userId: string) =>
  trx
    .deleteFrom("project_user_memberships")
    .where("user_id", "=", userId)
    .where("project_id", "in", trx.selectFrom("projects").select("id").where("org_id", "=", orgId))
    .returning("project_id")
    .execute();

export const deleteUserGroupMembershipsInOrg = (trx: Tx, orgId: string, userId: string) =>
  trx
    .deleteFrom("group_user_members")
    .where("user_id", "=", userId)
    .where("group_id", "in", trx.selectFrom("groups").select("id").where("org_id", "=", orgId))
    .execute();

export const listOrganizationsOfUser = (db: Database, userId: string) =>
  db
    .selectFrom("organizations as o")
    .innerJoin("org_user_memberships as om", "om.org_id", "o.id")
    .select(["o.id", "o.name", "o.slug", "o.created_at", "o.updated_at"])
    .where("om.user_id", "=", userId)
    .where("om.status", "=", "accepted")
    .where("om.is_active", "=", true)
    .orderBy("o.created_at")
    .execute();

export const findOrganizationById = (db: Database | Tx, orgId: string) =>
  db
    .selectFrom("organizations")
    .select(["id", "name", "slug", "created_at", "updated_at"])
    .where("id", "=", orgId)
    .executeTakeFirst();

export const findOrganizationBySlug = (db: Database, slug: string) =>
  db
    .selectFrom("organizations")
    .select(["id", "name", "slug", "created_at", "updated_at"])
    .where("slug", "=", slug)
    .executeTakeFirst();

/** Accepted members of an organization named by e-mail or username (both lower-case). */
export const findOrgMembersByNames = (db: Database, orgId: string, names: string[]) =>
  names.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("org_user_memberships as om")
        .innerJoin("users as u", "u.id", "om.user_id")
        .select(["u.id", "u.email", "u.username"])
        .where("om.org_id", "=", orgId)
        .where("om.status", "=", "accepted")
        .where((eb) =>
          eb.or([eb(sql<string>`lower(u.email)`, "in", names), eb(sql<string>`lower(u.username)`, "in", names)]),
        )
        .execute();

export const insertUserProjectMembership = async (trx: Tx, projectId: string, userId: string, roles: RoleGrant[]) => {
  const row = await trx
    .insertInto("project_user_memberships")
    .values({ project_id: projectId, user_id: userId })
    .returning(["id", "user_id", "project_id", "created_at"])
    .executeTakeFirstOrThrow();
  await trx.insertInto("project_user_membership_roles").values(roleRows(row.id, roles)).execute();
  return row;
};

export const listUserProjectMemberships = (db: Database | Tx, projectId: string, userIds?: string[]) =>
  db
    .selectFrom("project_user_memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .innerJoin("projects as p", "p.id", "m.project_id")
    .leftJoin("org_user_memberships as om", (join) =>
      join.onRef("om.org_id", "=", "p.org_id").onRef("om.user_id", "=", "m.user_id"),
    )
    .select([
      "m.id",
      "m.user_id",
      "m.project_id",
      "m.created_at",
      "m.updated_at",
      "u.username",
      "u.email",
      memberFirstName,
      memberLastName,
    ])
    .where("m.project_id", "=", projectId)
    .$if(userIds !== undefined, (qb) => qb.where("m.user_id", "in", userIds!.length ? userIds! : [""]))
    .orderBy("m.created_at")
    .execute();

export const listUserMembershipRoles = (db: Database, membershipIds: string[]) =>
  findMembershipRoles(db, membershipIds, "project_user_membership_roles");

export const deleteUserProjectMemberships = (trx: Tx, projectId: string, userIds: string[]) =>
  trx
    .deleteFrom("project_user_memberships")
    .where("project_id", "=", projectId)
    .where("user_id", "in", userIds)
    .returning(["id", "user_id", "project_id", "created_at"])
    .execute();

/** Projects of an organization among `ids`: invitations may only name the inviter's own org's projects. */
export const findProjectsOfOrg = (db: Database, orgId: string, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("projects")
        .select(["id", "name"])
        .where("org_id", "=", orgId)
        .where(sql<boolean>`id = any(${ids}::uuid[])`)
        .execute();

export const deleteAliasesOfUser = (trx: Tx, orgId: string, userId: string, aliasType: string) =>
  trx
    .deleteFrom("user_aliases")
    .where("org_id", "=", orgId)
    .where("user_id", "=", userId)
    .where("alias_type", "=", aliasType)
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

/** The projects of an organization a person holds a membership of (their abilities there change with them). */
export const listUserProjectIdsInOrg = async (trx: Tx, orgId: string, userId: string) =>
  (
    await trx
      .selectFrom("project_user_memberships as m")
      .innerJoin("projects as p", "p.id", "m.project_id")
      .select("m.project_id")
      .where("m.user_id", "=", userId)
      .where("p.org_id", "=", orgId)
      .execute()
  ).map((r) => r.project_id);

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
