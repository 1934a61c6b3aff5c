import { beforeAll, describe, expect, it } from "vitest";
import { createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, signIn } from "../sso/sso-helpers";
import { GROUP_SCHEMA, PATCH_SCHEMA, createScimToken, expectScimError, scim, scimUser } from "./scim-helpers";

const email = () => `${uniqueName("scim")}@example.test`;

describe("SCIM groups", () => {
  let tenant: Tenant;
  let token: string;
  const provision = async (address = email()) =>
    (await scim(tenant, token, "POST", "/Users", scimUser(address))).body as { id: string; userName: string };
  beforeAll(async () => {
    tenant = await createTenant();
    token = await createScimToken(tenant);
  });

  it("creates a group with members; it is a Keyward group of the organization", async () => {
    const [a, b] = [await provision(), await provision()];
    const name = uniqueName("Engineering Team");
    const created = await scim(tenant, token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: name,
      members: [{ value: a.id, display: a.userName }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      schemas: [GROUP_SCHEMA],
      displayName: name,
      members: [{ value: a.id, display: a.userName }],
      meta: { resourceType: "Group" },
    });
    const group = expectOk(await tenant.admin.groups.get({ params: { id: created.body.id } }));
    expect(group).toMatchObject({ name, role: "no-access" });
    expect(group.slug).toMatch(/^engineering-team-/);
    expectScimError(
      await scim(tenant, token, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: name }),
      409,
      "uniqueness",
    );

    const got = await scim(tenant, token, "GET", `/Groups/${created.body.id}`);
    expect(got.body).toEqual(created.body);
    const listed = await scim(tenant, token, "GET", `/Groups?filter=${encodeURIComponent(`displayName eq "${name}"`)}`);
    expect(listed.body).toMatchObject({ totalResults: 1, Resources: [{ id: created.body.id }] });
    const slim = await scim(tenant, token, "GET", "/Groups?excludedAttributes=members");
    expect(slim.body.Resources[0]!.members).toBeUndefined();
    expectScimError(
      await scim(tenant, token, "GET", `/Groups?filter=${encodeURIComponent('id eq "x"')}`),
      400,
      "invalidFilter",
    );

    const added = await scim(tenant, token, "PATCH", `/Groups/${created.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "Add", path: "members", value: [{ value: b.id }] }],
    });
    expect(added.body.members!.map((m) => m.value).sort()).toEqual([a.id, b.id].sort());
    const removed = await scim(tenant, token, "PATCH", `/Groups/${created.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [
        { op: "Remove", path: `members[value eq "${a.id}"]` },
        { op: "replace", value: { displayName: `${name} 2` } },
      ],
    });
    expect(removed.body).toMatchObject({ displayName: `${name} 2`, members: [{ value: b.id }] });
    // Operations apply in order: added then removed is out, everyone removed then one added is that one.
    const ordered = await scim(tenant, token, "PATCH", `/Groups/${created.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [
        { op: "add", path: "members", value: [{ value: a.id }] },
        { op: "remove", path: "members", value: [{ value: a.id }] },
      ],
    });
    expect(ordered.body.members).toEqual([{ value: b.id, display: b.userName }]);
    const reset = await scim(tenant, token, "PATCH", `/Groups/${created.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [
        { op: "remove", path: "members" },
        { op: "add", path: "members", value: [{ value: a.id }] },
      ],
    });
    expect(reset.body.members).toEqual([{ value: a.id, display: a.userName }]);

    const replaced = await scim(tenant, token, "PUT", `/Groups/${created.body.id}`, {
      schemas: [GROUP_SCHEMA],
      id: created.body.id,
      displayName: name,
      members: [{ value: a.id }],
    });
    expect(replaced.body).toMatchObject({ displayName: name, members: [{ value: a.id }] });
    expectScimError(await scim(tenant, token, "PUT", `/Groups/${created.body.id}`, { displayName: name }), 400);

    expect(await scim(tenant, token, "DELETE", `/Groups/${created.body.id}`)).toMatchObject({ status: 200, body: {} });
    expectScimError(await scim(tenant, token, "GET", `/Groups/${created.body.id}`), 404);
    expect((await tenant.admin.groups.get({ params: { id: created.body.id } })).status).toBe(404);
  });

  it("gives a group's project roles to its members, who lose them when deactivated", async () => {
    await configureSso(tenant);
    const project = await createProject(tenant);
    const address = email();
    const member = await provision(address);
    const { body: group } = await scim(tenant, token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: uniqueName("readers"),
      members: [{ value: member.id }],
    });
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const session = await signIn(tenant, { sub: `sub-${address}`, email: address });
    expect((await session.client.projects.get({ params: { projectId: project.id } })).status).toBe(200);
    // Someone provisioned outside the group cannot read the project.
    const outsider = `${uniqueName("outsider")}@example.test`;
    await provision(outsider);
    const outside = await signIn(tenant, { sub: `sub-${outsider}`, email: outsider });
    expect((await outside.client.projects.get({ params: { projectId: project.id } })).status).not.toBe(200);

    const off = await scim(tenant, token, "PATCH", `/Users/${member.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expect(off.body.active).toBe(false);
    // Every session ended at once: the very next request is refused.
    expect((await session.client.users.me()).status).toBe(401);
    expect((await scim(tenant, token, "GET", `/Groups/${group.id}`)).body.members).toEqual([]);
    const members = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
    expect(members.find((m) => m.id === member.id)).toMatchObject({ isActive: false });
  });

  it("deleting a person ends their sessions, project memberships and group memberships", async () => {
    await configureSso(tenant).catch(() => undefined);
    const project = await createProject(tenant);
    const address = email();
    const member = await provision(address);
    expectOk(
      await tenant.admin.users.inviteProjectMembers({ params: { projectId: project.id }, body: { emails: [address] } }),
    );
    const { body: group } = await scim(tenant, token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: uniqueName("leavers"),
      members: [{ value: member.id }],
    });
    const session = await signIn(tenant, { sub: `sub-${address}`, email: address });
    expect((await session.client.projects.get({ params: { projectId: project.id } })).status).toBe(200);
    expect((await scim(tenant, token, "DELETE", `/Users/${member.id}`)).status).toBe(200);
    expect((await scim(tenant, token, "GET", `/Groups/${group.id}`)).body.members).toEqual([]);
    expect((await session.client.projects.get({ params: { projectId: project.id } })).status).toBe(401);
    expect((await session.client.users.me()).status).toBe(401);
    const left = expectOk(await tenant.admin.users.listProjectMemberships({ params: { projectId: project.id } }));
    expect(left.memberships.some((m) => m.user.email === address)).toBe(false);
  });
});
