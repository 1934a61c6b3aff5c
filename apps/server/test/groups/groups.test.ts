import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { insertOrgUser } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

const createGroup = async (tenant: Tenant, name = uniqueName("group"), role?: string) =>
  expectOk(await tenant.admin.groups.create({ body: { name, ...(role ? { role } : {}) } }));

describe("POST /api/v1/groups", () => {
  it("creates a group with a generated slug and the no-access role by default", async () => {
    const tenant = await createTenant();
    const res = await tenant.admin.groups.create({ body: { name: "Platform Team" } });
    expect(res.status).toBe(200);
    const group = expectOk(res);
    expect(group).toMatchObject({ orgId: tenant.orgId, name: "Platform Team", role: "no-access", roleId: null });
    expect(group.slug).toMatch(/^platform-team-[a-f0-9]{8}$/);
    const explicit = expectOk(
      await tenant.admin.groups.create({ body: { name: "Ops", slug: "Ops-Team", role: "member" } }),
    );
    expect(explicit).toMatchObject({ slug: "ops-team", role: "member" });
  });

  it("refuses duplicate names and slugs and unknown roles (400)", async () => {
    const tenant = await createTenant();
    await tenant.admin.groups.create({ body: { name: "dup", slug: "dup-slug" } });
    const name = await tenant.admin.groups.create({ body: { name: "dup" } });
    expect(name.status).toBe(400);
    expect(name.body).toMatchObject({
      message: "Failed to create group with name 'dup'. Group with the same name already exists",
    });
    const slug = await tenant.admin.groups.create({ body: { name: "other", slug: "dup-slug" } });
    expect(slug.status).toBe(400);
    expect(slug.body).toMatchObject({
      message: "Failed to create group with slug 'dup-slug'. Group with the same slug already exists",
    });
    const role = await tenant.admin.groups.create({ body: { name: "x", role: "owner" } });
    expect(role.status).toBe(400);
    expect(role.body).toMatchObject({ message: "Failed to find role with slug owner" });
  });

  it("needs org create on groups (403), a token (401) and valid input (422)", async () => {
    const tenant = await createTenant();
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.groups.create({ body: { name: "x" } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on groups",
    });
    expect((await tenant.anonymous.groups.create({ body: { name: "x" } })).status).toBe(401);
    expect((await tenant.admin.groups.create({ body: { name: "" } })).status).toBe(422);
    expect((await tenant.admin.groups.create({ body: { name: "x", slug: "abc" } })).status).toBe(422);
    expect((await tenant.admin.groups.create({ body: { name: "x".repeat(51) } })).status).toBe(422);
  });
});

describe("GET /api/v1/groups and /api/v1/groups/:id", () => {
  it("lists and reads the organization's groups only", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const group = await createGroup(tenant, "alpha");
    const foreign = await createGroup(other, "alpha");
    const list = await tenant.admin.groups.list();
    expect(list.status).toBe(200);
    expect(expectOk(list).map((g) => g.id)).toEqual([group.id]);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const read = await member.client.groups.get({ params: { id: group.id } });
    expect(read.status).toBe(200);
    expect(expectOk(read)).toMatchObject({ id: group.id, name: "alpha", customRoleSlug: null });
    for (const id of [foreign.id, randomUUID(), "not-a-uuid"]) {
      const res = await tenant.admin.groups.get({ params: { id } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Cannot find group with ID ${id}` });
    }
    const none = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await none.client.groups.list()).status).toBe(403);
    expect((await none.client.groups.get({ params: { id: group.id } })).status).toBe(403);
    expect((await tenant.anonymous.groups.list()).status).toBe(401);
    expect((await tenant.anonymous.groups.get({ params: { id: group.id } })).status).toBe(401);
  });
});

describe("PATCH /api/v1/groups/:id", () => {
  it("updates name, slug and role", async () => {
    const tenant = await createTenant();
    const group = await createGroup(tenant);
    const res = await tenant.admin.groups.update({
      params: { id: group.id },
      body: { name: "renamed", slug: "renamed-group", role: "member" },
    });
    expect(res.status).toBe(200);
    expect(expectOk(res)).toMatchObject({ id: group.id, name: "renamed", slug: "renamed-group", role: "member" });
  });

  it("answers 400 for taken names or slugs and unknown roles, 404, 403, 401 and 422", async () => {
    const tenant = await createTenant();
    const a = await createGroup(tenant, "a-group");
    const b = await createGroup(tenant, "b-group");
    const name = await tenant.admin.groups.update({ params: { id: b.id }, body: { name: "a-group" } });
    expect(name.status).toBe(400);
    expect(name.body).toMatchObject({
      message: "Failed to update group with name 'a-group'. Group with the same name already exists",
    });
    expect((await tenant.admin.groups.update({ params: { id: b.id }, body: { slug: a.slug } })).status).toBe(400);
    expect((await tenant.admin.groups.update({ params: { id: b.id }, body: { role: "root" } })).status).toBe(400);
    const missing = await tenant.admin.groups.update({ params: { id: randomUUID() }, body: { name: "z" } });
    expect(missing.status).toBe(404);
    const member = await createIdentity(tenant, { orgRole: "member" });
    expect((await member.client.groups.update({ params: { id: a.id }, body: { name: "z" } })).status).toBe(403);
    expect((await tenant.anonymous.groups.update({ params: { id: a.id }, body: { name: "z" } })).status).toBe(401);
    expect((await tenant.admin.groups.update({ params: { id: a.id }, body: { slug: "x" } })).status).toBe(422);
  });
});

describe("DELETE /api/v1/groups/:id", () => {
  it("deletes the group with its members and project memberships", async () => {
    const tenant = await createTenant();
    const group = await createGroup(tenant);
    const project = await createProject(tenant);
    const identity = await createIdentity(tenant);
    expectOk(await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } }));
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const before = await tenant.app.deps.db
      .selectFrom("projects")
      .select("permission_version")
      .where("id", "=", project.id)
      .executeTakeFirstOrThrow();
    const res = await tenant.admin.groups.delete({ params: { id: group.id } });
    expect(res.status).toBe(200);
    expect(expectOk(res)).toMatchObject({ id: group.id });
    expect((await tenant.admin.groups.get({ params: { id: group.id } })).status).toBe(404);
    expect(
      expectOk(await tenant.admin.projectGroups.list({ params: { projectId: project.id } })).groupMemberships,
    ).toEqual([]);
    const after = await tenant.app.deps.db
      .selectFrom("projects")
      .select("permission_version")
      .where("id", "=", project.id)
      .executeTakeFirstOrThrow();
    expect(Number(after.permission_version)).toBeGreaterThan(Number(before.permission_version));
  });

  it("answers 404, 403 and 401", async () => {
    const tenant = await createTenant();
    const group = await createGroup(tenant);
    expect((await tenant.admin.groups.delete({ params: { id: randomUUID() } })).status).toBe(404);
    expect((await tenant.admin.groups.delete({ params: { id: "x" } })).status).toBe(404);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.groups.delete({ params: { id: group.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to delete on groups" });
    expect((await tenant.anonymous.groups.delete({ params: { id: group.id } })).status).toBe(401);
  });
});

describe("group members: users", () => {
  it("adds, lists and removes organization users", async () => {
    const tenant = await createTenant();
    const group = await createGroup(tenant);
    const alice = await insertOrgUser(tenant);
    const bob = await insertOrgUser(tenant);
    const added = await tenant.admin.groups.addUser({ params: { id: group.id, username: alice.username } });
    expect(added.status).toBe(200);
    expect(expectOk(added)).toMatchObject({
      id: alice.id,
      username: alice.username,
      email: alice.username,
      firstName: "Test",
      lastName: "User",
    });
    const all = expectOk(await tenant.admin.groups.listUsers({ params: { id: group.id }, query: {} }));
    const flags = Object.fromEntries(all.users.map((u) => [u.username, u.isPartOfGroup]));
    expect(flags).toMatchObject({ [alice.username]: true, [bob.username]: false });
    expect(all.users.find((u) => u.id === alice.id)!.joinedGroupAt).not.toBeNull();
    const members = expectOk(
      await tenant.admin.groups.listUsers({ params: { id: group.id }, query: { filter: "existingMembers" } }),
    );
    expect(members).toMatchObject({ totalCount: 1, users: [{ id: alice.id }] });
    const dup = await tenant.admin.groups.addUser({ params: { id: group.id, username: alice.username } });
    expect(dup.status).toBe(400);
    const removed = await tenant.admin.groups.removeUser({ params: { id: group.id, username: alice.username } });
    expect(expectOk(removed).id).toBe(alice.id);
    const again = await tenant.admin.groups.removeUser({ params: { id: group.id, username: alice.username } });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ message: `User with username ${alice.username} is not a member of the group` });
  });

  it("answers 404 for unknown users and groups (another organization's user included), 403 and 401", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const group = await createGroup(tenant);
    const stranger = await insertOrgUser(other);
    const res = await tenant.admin.groups.addUser({ params: { id: group.id, username: stranger.username } });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ message: `Failed to find user with username ${stranger.username}` });
    const user = await insertOrgUser(tenant);
    expect((await tenant.admin.groups.addUser({ params: { id: randomUUID(), username: user.username } })).status).toBe(
      404,
    );
    expect((await tenant.admin.groups.listUsers({ params: { id: randomUUID() }, query: {} })).status).toBe(404);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.groups.addUser({ params: { id: group.id, username: user.username } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit on groups" });
    expect((await member.client.groups.removeUser({ params: { id: group.id, username: user.username } })).status).toBe(
      403,
    );
    expect((await member.client.groups.listUsers({ params: { id: group.id }, query: {} })).status).toBe(200);
    expect((await tenant.anonymous.groups.listUsers({ params: { id: group.id }, query: {} })).status).toBe(401);
    expect((await tenant.admin.groups.listUsers({ params: { id: group.id }, query: { limit: 0 } })).status).toBe(422);
  });
});

describe("group members: identities", () => {
  it("adds, lists and removes organization identities, refusing project-owned ones", async () => {
    const tenant = await createTenant();
    const group = await createGroup(tenant);
    const identity = await createIdentity(tenant);
    const res = await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } });
    expect(res.status).toBe(200);
    expect(expectOk(res)).toEqual({ id: identity.id });
    const listed = expectOk(
      await tenant.admin.groups.listIdentities({ params: { id: group.id }, query: { filter: "existingMembers" } }),
    );
    expect(listed).toMatchObject({ totalCount: 1, machineIdentities: [{ id: identity.id, isPartOfGroup: true }] });
    const nonMembers = expectOk(
      await tenant.admin.groups.listIdentities({ params: { id: group.id }, query: { filter: "nonMembers" } }),
    );
    expect(nonMembers.machineIdentities.some((i) => i.id === identity.id)).toBe(false);
    const dup = await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } });
    expect(dup.status).toBe(400);
    const project = await createProject(tenant);
    const owned = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "owned" } }),
    ).identity;
    const refused = await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: owned.id } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ message: "A project-owned identity cannot be a member of a group" });
    expect(
      expectOk(await tenant.admin.groups.removeIdentity({ params: { id: group.id, machineIdentityId: identity.id } })),
    ).toEqual({ id: identity.id });
    const gone = await tenant.admin.groups.removeIdentity({ params: { id: group.id, machineIdentityId: identity.id } });
    expect(gone.status).toBe(404);
  });

  it("answers 404 for unknown identities, 403 and 401", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const group = await createGroup(tenant);
    const foreign = await createIdentity(other);
    for (const machineIdentityId of [foreign.id, randomUUID(), "nope"]) {
      const res = await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Failed to find identity with ID ${machineIdentityId}` });
    }
    const identity = await createIdentity(tenant);
    const member = await createIdentity(tenant, { orgRole: "member" });
    expect(
      (await member.client.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } })).status,
    ).toBe(403);
    expect(
      (await member.client.groups.removeIdentity({ params: { id: group.id, machineIdentityId: identity.id } })).status,
    ).toBe(403);
    const none = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await none.client.groups.listIdentities({ params: { id: group.id }, query: {} })).status).toBe(403);
    expect(
      (await tenant.anonymous.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } })).status,
    ).toBe(401);
  });
});
