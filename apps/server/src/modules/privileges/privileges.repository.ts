import { sql } from "kysely";
import { batchedLookup } from "../../db/batched-lookup";
import { compiledOnce } from "../../db/compiled-once";
import type { Database } from "../../db/database";
import type { PermissionRule } from "../../permissions";

const RETURNING = [
  "id",
  "slug",
  "membership_id",
  "project_id",
  "identity_id",
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
const COLUMNS = RETURNING.map((c) => `a.${c}` as const);

/** The temporary window as stored: all null for a permanent privilege. */
export type PrivilegeWindow = {
  is_temporary: boolean;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | null;
  temporary_access_end_time: Date | null;
};

const select = (db: Database) => db.selectFrom("identity_project_additional_privileges as a").select(COLUMNS);

export const findPrivilegeBySlug = (db: Database, projectId: string, identityId: string, slug: string) =>
  select(db)
    .where("a.project_id", "=", projectId)
    .where("a.identity_id", "=", identityId)
    .where("a.slug", "=", slug)
    .executeTakeFirst();

export type PrivilegeRow = NonNullable<Awaited<ReturnType<typeof findPrivilegeBySlug>>>;

/**
 * Privileges by id with what the ability lookup needs of their projects, compiled once. Every
 * column costs a row-description entry and a parse on each request, so the project's are kept to
 * the few the check reads. `ids` must be UUIDs: one malformed id would fail the whole batch.
 */
const privilegesWithProject = compiledOnce((db, ids: string[]) =>
  select(db)
    .innerJoin("projects as p", "p.id", "a.project_id")
    .select(["p.org_id as p_org_id", "p.type as p_type", "p.permission_version as p_permission_version"])
    .where(sql<boolean>`a.id = any(${ids}::uuid[])`),
);
const privilegeWithProject = batchedLookup(privilegesWithProject, (row) => row.id);

/**
 * The hot read path: the privilege and its project's version in one round trip shared with the
 * other lookups of the same event-loop turn. Another organization's privilege is not found.
 */
export const findPrivilegeWithProject = async (db: Database, orgId: string, id: string) => {
  const row = await privilegeWithProject(db, id);
  return row?.p_org_id === orgId ? row : undefined;
};

export const listPrivileges = (db: Database, projectId: string, identityId: string) =>
  select(db)
    .where("a.project_id", "=", projectId)
    .where("a.identity_id", "=", identityId)
    .orderBy("a.created_at")
    .orderBy("a.id")
    .execute();

export const insertPrivilege = (
  db: Database,
  values: PrivilegeWindow & {
    slug: string;
    membership_id: string;
    project_id: string;
    identity_id: string;
    permissions: PermissionRule[];
    access_request_id?: string;
  },
) =>
  db
    .insertInto("identity_project_additional_privileges")
    .values({ ...values, permissions: JSON.stringify(values.permissions) })
    .returning(RETURNING)
    .executeTakeFirstOrThrow();

export const updatePrivilegeRow = (
  db: Database,
  id: string,
  values: Partial<PrivilegeWindow> & { slug?: string; permissions?: PermissionRule[] },
) =>
  db
    .updateTable("identity_project_additional_privileges")
    .set({ ...values, permissions: values.permissions && JSON.stringify(values.permissions), updated_at: new Date() })
    .where("id", "=", id)
    .returning(RETURNING)
    .executeTakeFirstOrThrow();

export const deletePrivilegeRow = (db: Database, id: string) =>
  db.deleteFrom("identity_project_additional_privileges").where("id", "=", id).execute();

/** The identity's direct project membership, which privileges hang off. */
export const findDirectMembershipId = async (db: Database, projectId: string, identityId: string) =>
  (
    await db
      .selectFrom("identity_project_memberships")
      .select("id")
      .where("project_id", "=", projectId)
      .where("identity_id", "=", identityId)
      .executeTakeFirst()
  )?.id;

/** The privileges approved access requests granted, by request. */
export const listPrivilegesOfRequests = (db: Database, requestIds: readonly string[]) =>
  requestIds.length === 0
    ? Promise.resolve([])
    : select(db)
        .where("a.access_request_id", "in", [...requestIds])
        .execute();

/** Revoking a request removes the privilege it granted. */
export const deletePrivilegeOfRequest = (db: Database, requestId: string) =>
  db.deleteFrom("identity_project_additional_privileges").where("access_request_id", "=", requestId).execute();
