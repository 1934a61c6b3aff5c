import { sql } from "kysely";
import { batchedLookup } from "../../db/batched-lookup";
import { compiledOnce } from "../../db/compiled-once";
import type { Database } from "../../db/database";
import type { PermissionRule } from "../../permissions";

/**
 * Additional privileges of both kinds of holder: an identity's (`identity_project_additional_privileges`,
 * hanging off `identity_project_memberships`) and a person's (`user_project_additional_privileges`, off
 * `project_user_memberships`). The two tables have the same columns but the holder's; every row is
 * read with that column as `holder_id`.
 */

/** Who holds a privilege. */
export type PrivilegeHolder = { type: "user" | "identity"; id: string };
export type HolderType = PrivilegeHolder["type"];

const TABLES = {
  identity: {
    privileges: "identity_project_additional_privileges",
    memberships: "identity_project_memberships",
    holder: "identity_id",
  },
  user: {
    privileges: "user_project_additional_privileges",
    memberships: "project_user_memberships",
    holder: "user_id",
  },
} as const;

/**
 * The tables of a holder type's privileges and memberships. Both kinds are typed as the identities'
 * tables: only the holder column differs, and it is only ever reached through `holderColumn`.
 */
const tableOf = (type: HolderType) => TABLES[type].privileges as "identity_project_additional_privileges";
const membershipTableOf = (type: HolderType) => TABLES[type].memberships as "identity_project_memberships";
const holderColumn = (type: HolderType) => TABLES[type].holder as "identity_id";

const COLUMNS = [
  "id",
  "slug",
  "membership_id",
  "project_id",
  "is_temporary",
  "temporary_mode",
  "temporary_range",
  "temporary_access_start_time",
  "temporary_access_end_time",
  "permissions",
  "created_at",
  "updated_at",
  "access_request_id",
] as const;
const PREFIXED = COLUMNS.map((c) => `a.${c}` as const);

/** The temporary window as stored: all null for a permanent privilege. */
export type PrivilegeWindow = {
  is_temporary: boolean;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | null;
  temporary_access_end_time: Date | null;
};

const select = (db: Database, type: HolderType) =>
  db
    .selectFrom(`${tableOf(type)} as a`)
    .select(PREFIXED)
    .select(sql.ref<string>(`a.${holderColumn(type)}`).as("holder_id"));

const returning = (type: HolderType) => [...COLUMNS, sql.ref<string>(holderColumn(type)).as("holder_id")] as const;

export const findPrivilegeBySlug = (db: Database, projectId: string, holder: PrivilegeHolder, slug: string) =>
  select(db, holder.type)
    .where("a.project_id", "=", projectId)
    .where(`a.${holderColumn(holder.type)}`, "=", holder.id)
    .where("a.slug", "=", slug)
    .executeTakeFirst();

export type PrivilegeRow = NonNullable<Awaited<ReturnType<typeof findPrivilegeBySlug>>>;

/**
 * Privileges by id with what the ability lookup needs of their projects, compiled once per holder
 * type. Every column costs a row-description entry and a parse on each request, so the project's are
 * kept to the few the check reads. `ids` must be UUIDs: one malformed id would fail the whole batch.
 */
const lookupWithProject = (type: HolderType) =>
  batchedLookup(
    compiledOnce((db, ids: string[]) =>
      select(db, type)
        .innerJoin("projects as p", "p.id", "a.project_id")
        .select(["p.org_id as p_org_id", "p.type as p_type", "p.permission_version as p_permission_version"])
        .where(sql<boolean>`a.id = any(${ids}::uuid[])`),
    ),
    (row) => row.id,
  );
const privilegeWithProject = { identity: lookupWithProject("identity"), user: lookupWithProject("user") };

/**
 * The hot read path: the privilege and its project's version in one round trip shared with the
 * other lookups of the same event-loop turn. Another organization's privilege is not found.
 */
export const findPrivilegeWithProject = async (db: Database, type: HolderType, orgId: string, id: string) => {
  const row = await privilegeWithProject[type](db, id);
  return row?.p_org_id === orgId ? row : undefined;
};

/** A holder's privileges in a project, oldest first. */
export const listPrivileges = (db: Database, projectId: string, holder: PrivilegeHolder) =>
  select(db, holder.type)
    .where("a.project_id", "=", projectId)
    .where(`a.${holderColumn(holder.type)}`, "=", holder.id)
    .orderBy("a.created_at")
    .orderBy("a.id")
    .execute();

export const insertPrivilege = (
  db: Database,
  holder: PrivilegeHolder,
  values: PrivilegeWindow & {
    slug: string;
    membership_id: string;
    project_id: string;
    permissions: PermissionRule[];
    access_request_id?: string;
  },
) =>
  db
    .insertInto(tableOf(holder.type))
    .values({ ...values, [holderColumn(holder.type)]: holder.id, permissions: JSON.stringify(values.permissions) })
    .returning(returning(holder.type))
    .executeTakeFirstOrThrow();

export const updatePrivilegeRow = (
  db: Database,
  type: HolderType,
  id: string,
  values: Partial<PrivilegeWindow> & { slug?: string; permissions?: PermissionRule[] },
) =>
  db
    .updateTable(tableOf(type))
    .set({ ...values, permissions: values.permissions && JSON.stringify(values.permissions), updated_at: new Date() })
    .where("id", "=", id)
    .returning(returning(type))
    .executeTakeFirstOrThrow();

export const deletePrivilegeRow = (db: Database, type: HolderType, id: string) =>
  db.deleteFrom(tableOf(type)).where("id", "=", id).execute();

/** The holder's direct project membership, which privileges hang off. */
export const findDirectMembershipId = async (db: Database, projectId: string, holder: PrivilegeHolder) =>
  (
    await db
      .selectFrom(membershipTableOf(holder.type))
      .select("id")
      .where("project_id", "=", projectId)
      .where(holderColumn(holder.type), "=", holder.id)
      .executeTakeFirst()
  )?.id;

/** A person's project membership with its project's organization: another organization's is not found. */
export const findPersonMembershipInOrg = (db: Database, orgId: string, membershipId: string) =>
  db
    .selectFrom("project_user_memberships as m")
    .innerJoin("projects as p", "p.id", "m.project_id")
    .select(["m.id", "m.user_id", "m.project_id"])
    .where("m.id", "=", membershipId)
    .where("p.org_id", "=", orgId)
    .executeTakeFirst();

/** A person's privileges on one project membership, oldest first. */
export const listPrivilegesOfPersonMembership = (db: Database, membershipId: string) =>
  select(db, "user").where("a.membership_id", "=", membershipId).orderBy("a.created_at").execute();

/** The privileges approved access requests granted (either holder's), by request. */
export const listPrivilegesOfRequests = async (db: Database, requestIds: readonly string[]) => {
  if (requestIds.length === 0) return [];
  const ofType = (type: HolderType) =>
    select(db, type)
      .where("a.access_request_id", "in", [...requestIds])
      .execute();
  return (await Promise.all([ofType("user"), ofType("identity")])).flat();
};

/** Revoking a request removes the privilege it granted. */
export const deletePrivilegeOfRequest = (db: Database, type: HolderType, requestId: string) =>
  db.deleteFrom(tableOf(type)).where("access_request_id", "=", requestId).execute();
