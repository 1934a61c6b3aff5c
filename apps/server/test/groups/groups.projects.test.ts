import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

const createGroup = async (tenant: Tenant) =>
  expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("group") } }));

describe("POST /api/v1/projects/:projectId/groups/:groupIdOrName", () => {
  it("adds a group by id or by name, with permanent and temporary roles", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    const res = await tenant.admin.projectGroups.add({
      params: { projectId: project.id, groupIdOrName: group.id },
      body: {},
    });
    expect(res.status).toBe(200);
    expect(expectOk(res).groupMembership).toMatchObject({ groupId: group.id, projectId: project.id });
    const second = await createGroup(tenant);
    const start = new Date().toISOString();
    const byName = await tenant.admin.projectGroups.add({
      params: { projectId: project.id, groupIdOrName: second.name },
      body: {
        roles: [
          { role: "viewer", isTemporary: false },
          {
            role: "member",
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "1h",
            temporaryAccessStartTime: start,
          },
        ],
      },
    });
    expect(expectOk(byName).groupMembership.groupId).toBe(second.id);
    const read = expectOk(
      await tenant.admin.projectGroups.get({ params: { projectId: project.id, groupId: second.id } }),
    ).groupMembership;
    // Roles written together share a timestamp, so their order is not part of the contract.
    expect([...read.roles].sort((a, b) => a.role.localeCompare(b.role))).toEqual([
      expect.objectContaining({
        role: "member",
        isTemporary: true,
        temporaryMode: "relative",
        temporaryRange: "1h",
        temporaryAccessStartTime: start,
        temporaryAccessEndTime: new Date(Date.parse(start) + 3_600_000).toISOString(),
      }),
      expect.objectContaining({ role: "viewer", isTemporary: false, temporaryMode: null }),
    ]);
    const first = expectOk(
      await tenant.admin.projectGroups.get({ params: { projectId: project.id, groupId: group.id } }),
    ).groupMembership;
    expect(first.roles.map((r) => r.role)).toEqual(["no-access"]);
  });

  it("answers 400 for a group already in the project or an unknown role, 404 for unknown groups and projects", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    const foreign = await createGroup(other);
    const add = (groupIdOrName: string, body: { role?: string } = {}, projectId = project.id) =>
      tenant.admin.projectGroups.add({ params: { projectId, groupIdOrName }, body });
    expectOk(await add(group.id));
    const dup = await add(group.id);
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({
      message: `Group with ID ${group.id} already exists in project with ID ${project.id}`,
    });
    const second = await createGroup(tenant);
    const role = await add(second.id, { role: "superuser" });
    expect(role.status).toBe(400);
    expect(role.body).toMatchObject({ message: "Project role with slug superuser not found" });
    for (const id of [foreign.id, randomUUID(), "no-such-group"]) {
      const res = await add(id);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Failed to find group with ID ${id}` });
    }
    expect((await add(group.id, {}, randomUUID())).status).toBe(404);
    expect((await add(group.id, {}, "not-a-project")).status).toBe(404);
  });

  it("needs create on groups (403), refuses roles beyond the caller's own (403 boundary), 401 and 422", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.projectGroups.add({
      params: { projectId: project.id, groupIdOrName: group.id },
      body: { role: "viewer" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on groups",
    });
    const role = await insertCustomRole(tenant, project.id, [
      { subject: "groups", action: ["read", "create", "edit"], inverted: false },
      { subject: "secrets", action: ["read", "describeSecret", "readValue"], inverted: false },
    ]);
    const manager = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    const boundary = await manager.client.projectGroups.add({
      params: { projectId: project.id, groupIdOrName: group.id },
      body: { role: "admin" },
    });
    expect(boundary.status).toBe(403);
    expect(boundary.body).toMatchObject({
      error: "PermissionBoundaryError",
      details: { missingPermissions: expect.any(Array) },
    });
    const within = await manager.client.projectGroups.add({
      params: { projectId: project.id, groupIdOrName: group.id },
      body: { role: "no-access" },
    });
    expect(within.status).toBe(200);
    expect(
      (
        await tenant.anonymous.projectGroups.add({
          params: { projectId: project.id, groupIdOrName: group.id },
          body: {},
        })
      ).status,
    ).toBe(401);
    const bad = await tenant.admin.projectGroups.add({
      params: { projectId: project.id, groupIdOrName: group.id },
      body: {
        roles: [
          {
            role: "viewer",
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "soon",
            temporaryAccessStartTime: "x",
          },
        ],
      },
    });
    expect(bad.status).toBe(422);
  });
});

describe("GET /api/v1/projects/:projectId/groups", () => {
  it("lists memberships exactly as the spec shows, custom roles as `custom`", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    const role = await insertCustomRole(tenant, project.id, [
      { subject: "secrets", action: ["read"], inverted: false },
    ]);
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { roles: [{ role, isTemporary: false }] },
      }),
    );
    const res = await tenant.admin.projectGroups.list({ params: { projectId: project.id } });
    expect(res.status).toBe(200);
    const [membership, ...rest] = expectOk(res).groupMemberships;
    expect(rest).toEqual([]);
    expect(Object.keys(membership!).sort()).toEqual(["createdAt", "group", "groupId", "id", "roles", "updatedAt"]);
    expect(membership).toMatchObject({
      groupId: group.id,
      group: { id: group.id, name: group.name, slug: group.slug },
    });
    const customRole = await tenant.app.deps.db
      .selectFrom("project_roles")
      .select(["id", "name"])
      .where("slug", "=", role)
      .executeTakeFirstOrThrow();
    expect(membership!.roles).toEqual([
      {
        id: expect.any(String),
        role: "custom",
        customRoleId: customRole.id,
        customRoleName: customRole.name,
        customRoleSlug: role,
        isTemporary: false,
        temporaryMode: null,
        temporaryRange: null,
        temporaryAccessStartTime: null,
        temporaryAccessEndTime: null,
      },
    ]);
  });

  it("needs read on groups (403), a token (401) and a project of the organization (404)", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const project = await createProject(tenant);
    const none = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const denied = await none.client.projectGroups.list({ params: { projectId: project.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to read on groups" });
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.projectGroups.list({ params: { projectId: project.id } })).status).toBe(200);
    expect((await tenant.anonymous.projectGroups.list({ params: { projectId: project.id } })).status).toBe(401);
    expect((await other.admin.projectGroups.list({ params: { projectId: project.id } })).status).toBe(404);
  });
});

describe("GET, PATCH and DELETE /api/v1/projects/:projectId/groups/:groupId", () => {
  it("reads, replaces the roles of and removes a group's membership", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const updated = await tenant.admin.projectGroups.update({
      params: { projectId: project.id, groupId: group.id },
      body: { roles: [{ role: "member" }, { role: "viewer", isTemporary: false }] },
    });
    expect(updated.status).toBe(200);
    expect(
      expectOk(updated)
        .roles.map((r) => r.role)
        .sort(),
    ).toEqual(["member", "viewer"]);
    const read = expectOk(
      await tenant.admin.projectGroups.get({ params: { projectId: project.id, groupId: group.id } }),
    );
    expect(read.groupMembership.roles.map((r) => r.role).sort()).toEqual(["member", "viewer"]);
    const removed = await tenant.admin.projectGroups.remove({ params: { projectId: project.id, groupId: group.id } });
    expect(removed.status).toBe(200);
    expect(expectOk(removed).groupMembership).toMatchObject({ groupId: group.id, projectId: project.id });
    const gone = await tenant.admin.projectGroups.get({ params: { projectId: project.id, groupId: group.id } });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({
      message: `Group with ID ${group.id} is not a member of project with ID ${project.id}`,
    });
  });

  it("answers 404 for unknown groups, 400 for unknown roles, 403 by action and boundary, 401 and 422", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const params = { projectId: project.id, groupId: group.id };
    const missing = { projectId: project.id, groupId: randomUUID() };
    expect((await tenant.admin.projectGroups.get({ params: missing })).status).toBe(404);
    expect(
      (await tenant.admin.projectGroups.update({ params: missing, body: { roles: [{ role: "viewer" }] } })).status,
    ).toBe(404);
    expect((await tenant.admin.projectGroups.remove({ params: missing })).status).toBe(404);
    expect((await tenant.admin.projectGroups.update({ params, body: { roles: [{ role: "nope" }] } })).status).toBe(400);
    expect((await tenant.admin.projectGroups.update({ params, body: { roles: [] } })).status).toBe(422);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.projectGroups.get({ params })).status).toBe(200);
    const edit = await viewer.client.projectGroups.update({ params, body: { roles: [{ role: "viewer" }] } });
    expect(edit.status).toBe(403);
    expect(edit.body).toMatchObject({ message: "You are not allowed to edit on groups" });
    const del = await viewer.client.projectGroups.remove({ params });
    expect(del.status).toBe(403);
    expect(del.body).toMatchObject({ message: "You are not allowed to delete on groups" });
    const none = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await none.client.projectGroups.get({ params })).status).toBe(403);
    const role = await insertCustomRole(tenant, project.id, [
      { subject: "groups", action: ["read", "edit"], inverted: false },
    ]);
    const editor = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    const boundary = await editor.client.projectGroups.update({ params, body: { roles: [{ role: "member" }] } });
    expect(boundary.status).toBe(403);
    expect(boundary.body).toMatchObject({ error: "PermissionBoundaryError" });
    expect((await tenant.anonymous.projectGroups.get({ params })).status).toBe(401);
    expect(
      (await tenant.anonymous.projectGroups.update({ params, body: { roles: [{ role: "viewer" }] } })).status,
    ).toBe(401);
    expect((await tenant.anonymous.projectGroups.remove({ params })).status).toBe(401);
  });
});

describe("group roles in effective permissions", () => {
  it("grants a member identity the group's project role, and takes it away with the membership", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const group = await createGroup(tenant);
    const identity = await createIdentity(tenant);
    expectOk(await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } }));
    const query = { workspaceId: project.id, environment: "dev", path: "/" };
    const before = await identity.client.secretImports.list({ query });
    expect(before.status).toBe(403);
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const granted = await identity.client.secretImports.list({ query });
    expect(granted.status).toBe(200);
    const write = await identity.client.folders.create({ body: { ...query, name: "nope" } });
    expect(write.status).toBe(403);
    expectOk(await tenant.admin.groups.removeIdentity({ params: { id: group.id, machineIdentityId: identity.id } }));
    expect((await identity.client.secretImports.list({ query })).status).toBe(403);
  });
});
