import { randomBytes } from "node:crypto";
import type { PermissionRule } from "../../src/permissions";
import { expectOk, uniqueName, type Tenant } from "./tenant";

/** A folder at `path` (created with its parents) in an environment of a project. */
export const createFolder = async (
  tenant: Tenant,
  projectId: string,
  environment: string,
  path: string,
  name: string,
) => expectOk(await tenant.admin.folders.create({ body: { workspaceId: projectId, environment, path, name } })).folder;

/** A custom project role written straight to the table, for tests that need conditional rules. */
export const insertCustomRole = async (
  tenant: Tenant,
  projectId: string,
  permissions: PermissionRule[],
  slug = uniqueName("role"),
) => {
  await tenant.app.deps.db
    .insertInto("project_roles")
    .values({ project_id: projectId, name: slug, slug, permissions: JSON.stringify(permissions) })
    .execute();
  return slug;
};

/** A user who belongs to the tenant's organization (users have no API of their own in Keyward). */
export const insertOrgUser = async (tenant: Tenant, role = "member") => {
  const username = `user-${randomBytes(4).toString("hex")}@keyward.test`;
  const user = await tenant.app.deps.db
    .insertInto("users")
    .values({ username, email: username, first_name: "Test", last_name: "User", password_hash: "x" })
    .returning(["id", "username"])
    .executeTakeFirstOrThrow();
  await tenant.app.deps.db
    .insertInto("org_user_memberships")
    .values({ org_id: tenant.orgId, user_id: user.id, role })
    .execute();
  return user;
};
