import { sql } from "kysely";
import type { Database } from "../../db/database";

/**
 * Any change that feeds an ability in a project (a role's rules, a membership or its roles, an
 * additional privilege, a group's membership or project roles) bumps the project's permission
 * version inside the same transaction, so a cached ability is never reused after the change.
 */
export const bumpPermissionVersion = async (db: Database, projectIds: readonly string[]) => {
  if (projectIds.length === 0) return;
  await db
    .updateTable("projects")
    .set({ permission_version: sql`permission_version + 1` })
    .where("id", "in", [...new Set(projectIds)])
    .execute();
};

/** Group changes reach every project the group belongs to. */
export const bumpPermissionVersionForGroup = async (db: Database, groupId: string) => {
  await db
    .updateTable("projects")
    .set({ permission_version: sql`permission_version + 1` })
    .where("id", "in", db.selectFrom("group_project_memberships").select("project_id").where("group_id", "=", groupId))
    .execute();
};

/** Identity-wide changes (deleting the identity, group membership) reach every project it is in. */
export const bumpPermissionVersionForIdentity = async (db: Database, identityId: string) => {
  await db
    .updateTable("projects")
    .set({ permission_version: sql`permission_version + 1` })
    .where("id", "in", db.selectFrom("identity_project_memberships").select("project_id").where("identity_id", "=", identityId))
    .execute();
};
