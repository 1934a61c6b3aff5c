import type { Database } from "../../db/database";
import type { PermissionRule } from "../../permissions";

const ROLE_COLUMNS = [
  "id",
  "project_id",
  "name",
  "slug",
  "description",
  "permissions",
  "created_at",
  "updated_at",
] as const;

export const insertRole = (
  db: Database,
  values: { project_id: string; name: string; slug: string; description: string | null; permissions: PermissionRule[] },
) =>
  db
    .insertInto("project_roles")
    .values({ ...values, permissions: JSON.stringify(values.permissions) })
    .returning(ROLE_COLUMNS)
    .executeTakeFirstOrThrow();

export const findRoleById = (db: Database, projectId: string, roleId: string) =>
  db
    .selectFrom("project_roles")
    .select(ROLE_COLUMNS)
    .where("project_id", "=", projectId)
    .where("id", "=", roleId)
    .executeTakeFirst();

export const findRoleBySlug = (db: Database, projectId: string, slug: string) =>
  db
    .selectFrom("project_roles")
    .select(ROLE_COLUMNS)
    .where("project_id", "=", projectId)
    .where("slug", "=", slug)
    .executeTakeFirst();

export const listRoles = (db: Database, projectId: string) =>
  db
    .selectFrom("project_roles")
    .select(ROLE_COLUMNS)
    .where("project_id", "=", projectId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

export type RoleRow = Awaited<ReturnType<typeof listRoles>>[number];

export const updateRoleRow = (
  db: Database,
  roleId: string,
  values: { name?: string; slug?: string; description?: string | null; permissions?: PermissionRule[] },
) =>
  db
    .updateTable("project_roles")
    .set({
      name: values.name,
      slug: values.slug,
      description: values.description,
      permissions: values.permissions === undefined ? undefined : JSON.stringify(values.permissions),
      updated_at: new Date(),
    })
    .where("id", "=", roleId)
    .returning(ROLE_COLUMNS)
    .executeTakeFirstOrThrow();

export const deleteRoleRow = (db: Database, roleId: string) =>
  db.deleteFrom("project_roles").where("id", "=", roleId).execute();

/** Memberships (identity or group) holding the role; a role in use cannot be deleted. */
export const isRoleInUse = async (db: Database, roleId: string) => {
  const [identityRole, groupRole] = await Promise.all([
    db
      .selectFrom("identity_project_membership_roles")
      .select("id")
      .where("custom_role_id", "=", roleId)
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom("group_project_membership_roles")
      .select("id")
      .where("custom_role_id", "=", roleId)
      .limit(1)
      .executeTakeFirst(),
  ]);
  return identityRole !== undefined || groupRole !== undefined;
};
