import type { Insertable, Updateable } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { UserProjectAdditionalPrivilegesTable } from "../../db/tables/people";

/** A person's project membership with its project's organization: another organization's is not found. */
export const findUserMembershipInOrg = (db: Database, orgId: string, membershipId: string) =>
  db
    .selectFrom("project_user_memberships as m")
    .innerJoin("projects as p", "p.id", "m.project_id")
    .select(["m.id", "m.user_id", "m.project_id"])
    .where("m.id", "=", membershipId)
    .where("p.org_id", "=", orgId)
    .executeTakeFirst();

const COLUMNS = [
  "id",
  "slug",
  "membership_id",
  "user_id",
  "project_id",
  "permissions",
  "is_temporary",
  "temporary_mode",
  "temporary_range",
  "temporary_access_start_time",
  "temporary_access_end_time",
  "created_at",
  "updated_at",
  "access_request_id",
] as const;

const PRIVILEGE_COLUMNS = [
  "a.id",
  "a.slug",
  "a.membership_id",
  "a.user_id",
  "a.project_id",
  "a.permissions",
  "a.is_temporary",
  "a.temporary_mode",
  "a.temporary_range",
  "a.temporary_access_start_time",
  "a.temporary_access_end_time",
  "a.created_at",
  "a.updated_at",
  "a.access_request_id",
] as const;

export const findUserPrivilegeInOrg = (db: Database, orgId: string, privilegeId: string) =>
  db
    .selectFrom("user_project_additional_privileges as a")
    .innerJoin("projects as p", "p.id", "a.project_id")
    .select(PRIVILEGE_COLUMNS)
    .where("a.id", "=", privilegeId)
    .where("p.org_id", "=", orgId)
    .executeTakeFirst();

export type UserPrivilegeRow = NonNullable<Awaited<ReturnType<typeof findUserPrivilegeInOrg>>>;

export const listUserPrivilegesOfMembership = (db: Database, membershipId: string) =>
  db
    .selectFrom("user_project_additional_privileges as a")
    .select(PRIVILEGE_COLUMNS)
    .where("a.membership_id", "=", membershipId)
    .orderBy("a.created_at")
    .execute();

export const insertUserPrivilege = (trx: Tx, values: Insertable<UserProjectAdditionalPrivilegesTable>) =>
  trx.insertInto("user_project_additional_privileges").values(values).returning(COLUMNS).executeTakeFirstOrThrow();

export const updateUserPrivilegeRow = (
  trx: Tx,
  privilegeId: string,
  values: Updateable<UserProjectAdditionalPrivilegesTable>,
) =>
  trx
    .updateTable("user_project_additional_privileges")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", privilegeId)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();

export const deleteUserPrivilegeRow = (trx: Tx, privilegeId: string) =>
  trx.deleteFrom("user_project_additional_privileges").where("id", "=", privilegeId).execute();

/** The privileges approved access requests granted, by request. */
export const listUserPrivilegesOfRequests = (db: Database, requestIds: readonly string[]) =>
  requestIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("user_project_additional_privileges as a")
        .select(PRIVILEGE_COLUMNS)
        .where("a.access_request_id", "in", [...requestIds])
        .execute();

export const deleteUserPrivilegeOfRequest = (trx: Tx, requestId: string) =>
  trx.deleteFrom("user_project_additional_privileges").where("access_request_id", "=", requestId).execute();
