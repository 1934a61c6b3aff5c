import type { Database } from "../../db/database";

export const PROJECT_COLUMNS = ["id", "org_id", "name", "slug", "description", "type", "permission_version", "created_at", "updated_at"] as const;

export const findProjectById = (db: Database, projectId: string) =>
  db.selectFrom("projects").select(PROJECT_COLUMNS).where("id", "=", projectId).executeTakeFirst();

export const findProjectBySlug = (db: Database, orgId: string, slug: string) =>
  db.selectFrom("projects").select(PROJECT_COLUMNS).where("org_id", "=", orgId).where("slug", "=", slug).executeTakeFirst();

export type ProjectRow = NonNullable<Awaited<ReturnType<typeof findProjectById>>>;

/** The identity's membership in the project and its roles, with custom roles' rules. */
export const findIdentityMembershipRoles = (db: Database, projectId: string, identityId: string) =>
  db
    .selectFrom("identity_project_memberships as m")
    .leftJoin("identity_project_membership_roles as r", "r.membership_id", "m.id")
    .leftJoin("project_roles as pr", "pr.id", "r.custom_role_id")
    .select([
      "m.id as membership_id",
      "r.role",
      "r.is_temporary",
      "r.temporary_access_start_time",
      "r.temporary_access_end_time",
      "pr.permissions as custom_permissions",
    ])
    .where("m.project_id", "=", projectId)
    .where("m.identity_id", "=", identityId)
    .execute();
