import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, newPerson, refresh, signedInPerson, signIn } from "../sso/sso-helpers";

describe("people in projects", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
  });

  it("adds organization members to a project by e-mail, as the SDK's inviteMembers does, and removes them", async () => {
    const alice = await signedInPerson(tenant);
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    const added = expectOk(await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [alice.email] } }));
    expect(added.memberships).toEqual([expect.objectContaining({ userId: alice.user.id, projectId: project.id })]);
    // The person now sees the project, with the default member role.
    expect(expectOk(await alice.client.projects.listWorkspaces({ query: {} })).workspaces.map((w) => w.id)).toEqual([
      project.id,
    ]);
    const listed = expectOk(await tenant.admin.users.listProjectMemberships({ params }));
    expect(listed.memberships).toEqual([
      expect.objectContaining({ userId: alice.user.id, roles: [expect.objectContaining({ role: "member" })] }),
    ]);

    const again = await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [alice.email] } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "Some users are already part of project" });
    const stranger = await tenant.admin.users.inviteProjectMembers({
      params,
      body: { emails: ["nobody-here@example.test"] },
    });
    expect(stranger.status).toBe(400);
    expect(stranger.body).toMatchObject({ message: "Some users are not part of org" });
    const upper = await tenant.admin.users.inviteProjectMembers({ params, body: { emails: ["Alice@Example.test"] } });
    expect(upper.status).toBe(422);
    const badRole = await tenant.admin.users.inviteProjectMembers({
      params,
      body: { emails: [alice.email], roleSlugs: ["no-such-role"] },
    });
    expect(badRole.status).toBe(400);

    const removed = expectOk(
      await tenant.admin.users.removeProjectMembers({ params, body: { emails: [alice.email] } }),
    );
    expect(removed.memberships.map((m) => m.userId)).toEqual([alice.user.id]);
    expect(expectOk(await alice.client.projects.listWorkspaces({ query: {} })).workspaces).toEqual([]);
    const gone = await tenant.admin.users.removeProjectMembers({ params, body: { emails: [alice.email] } });
    expect(gone.status).toBe(400);
    expect(gone.body).toMatchObject({ message: "Some users are not part of project" });
  });

  it("answers 403 to a caller without the right to manage members, and within the caller's own rights", async () => {
    const bob = await signedInPerson(tenant);
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.users.inviteProjectMembers({ params, body: { emails: [bob.email] } })).status).toBe(
      403,
    );
    expect((await viewer.client.users.listProjectMemberships({ params })).status).toBe(200);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    // A member may not hand out admin: the grant boundary.
    const boundary = await member.client.users.inviteProjectMembers({
      params,
      body: { emails: [bob.email], roleSlugs: ["admin"] },
    });
    expect(boundary.status).toBe(403);
    // Another organization's project is 404.
    const other = await createTenant();
    expect((await other.admin.users.inviteProjectMembers({ params, body: { emails: [bob.email] } })).status).toBe(404);
  });

  it("lets a group's project roles reach the people in it", async () => {
    const carol = await signedInPerson(tenant);
    const project = await createProject(tenant);
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("team") } }));
    expectOk(await tenant.admin.groups.addUser({ params: { id: group.id, username: carol.email } }));
    expect(expectOk(await carol.client.projects.listWorkspaces({ query: {} })).workspaces).toEqual([]);
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    expect(expectOk(await carol.client.projects.listWorkspaces({ query: {} })).workspaces.map((w) => w.id)).toEqual([
      project.id,
    ]);
    const read = await carol.client.secretsV3.list({
      query: { workspaceId: project.id, environment: "dev", secretPath: "/" },
    });
    expect(read.status).toBe(200);
  });

  it("a person who creates a project is its admin, and the audit log names the person", async () => {
    const dave = await signedInPerson(tenant);
    // Organization members may create projects; Dave joined without access, so an admin raises him.
    expectOk(
      await tenant.admin.users.updateOrgMembership({
        params: { orgId: tenant.orgId, membershipId: dave.membership.id },
        body: { role: "member" },
      }),
    );
    const { project } = expectOk(
      await dave.client.projects.create({ body: { projectName: uniqueName("daves"), type: "secret-manager" } }),
    );
    expectOk(
      await dave.client.secretsV3.create({
        params: { secretName: "DAVES_KEY" },
        body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: "v" },
      }),
    );
    const { auditLogs } = expectOk(await tenant.admin.auditLogs.list({ query: { actor: dave.user.id, limit: 20 } }));
    const types = auditLogs.map((e) => e.event.type);
    expect(types).toEqual(expect.arrayContaining(["create-project", "create-secret"]));
    for (const event of auditLogs) {
      expect(event.actor).toMatchObject({ type: "user", metadata: { userId: dave.user.id, email: dave.email } });
    }
  });
});

describe("people in the organization", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
  });

  it("changes roles within the changer's own, and a deactivated person's session ends at once", async () => {
    const erin = await signedInPerson(tenant);
    const frank = await signedInPerson(tenant);
    const params = { orgId: tenant.orgId, membershipId: erin.membership.id };
    // A member lacks the right to change memberships (and so to grant themselves admin).
    expectOk(
      await tenant.admin.users.updateOrgMembership({
        params: { orgId: tenant.orgId, membershipId: frank.membership.id },
        body: { role: "member" },
      }),
    );
    const promoteSelf = await frank.client.users.updateOrgMembership({
      params: { orgId: tenant.orgId, membershipId: frank.membership.id },
      body: { role: "admin" },
    });
    expect(promoteSelf.status).toBe(403);
    const memberIdentity = await createIdentity(tenant, { orgRole: "member" });
    expect((await memberIdentity.client.users.updateOrgMembership({ params, body: { role: "admin" } })).status).toBe(
      403,
    );
    expect((await tenant.admin.users.updateOrgMembership({ params, body: { role: "no-such-role" } })).status).toBe(400);

    expect((await erin.client.users.me()).status).toBe(200);
    const deactivated = expectOk(await tenant.admin.users.updateOrgMembership({ params, body: { isActive: false } }));
    expect(deactivated.membership.isActive).toBe(false);
    expect((await erin.client.users.me()).status).toBe(401);
    expect((await refresh(tenant.app.baseUrl, erin.jar)).status).toBe(401);
  });

  it("an admin person cannot change or remove their own membership; removal ends the person's access", async () => {
    const grace = await signedInPerson(tenant);
    expectOk(
      await tenant.admin.users.updateOrgMembership({
        params: { orgId: tenant.orgId, membershipId: grace.membership.id },
        body: { role: "admin" },
      }),
    );
    const own = { orgId: tenant.orgId, membershipId: grace.membership.id };
    expect((await grace.client.users.updateOrgMembership({ params: own, body: { role: "member" } })).status).toBe(400);
    expect((await grace.client.users.deleteOrgMembership({ params: own })).status).toBe(400);
    const heidi = await signedInPerson(tenant);
    const project = await createProject(tenant);
    expectOk(
      await tenant.admin.users.inviteProjectMembers({
        params: { projectId: project.id },
        body: { emails: [heidi.email] },
      }),
    );
    expectOk(
      await grace.client.users.deleteOrgMembership({
        params: { orgId: tenant.orgId, membershipId: heidi.membership.id },
      }),
    );
    expect((await heidi.client.users.me()).status).toBe(401);
    expect(
      expectOk(await tenant.admin.users.listProjectMemberships({ params: { projectId: project.id } })).memberships,
    ).toEqual([]);
    expect(
      (
        await tenant.admin.users.deleteOrgMembership({
          params: { orgId: tenant.orgId, membershipId: heidi.membership.id },
        })
      ).status,
    ).toBe(404);
  });

  it("hides another organization's people (404) and refuses machine identities the person routes", async () => {
    const other = await createTenant();
    expect((await other.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).status).toBe(404);
    expect((await tenant.admin.users.me()).status).toBe(403);
    expect(expectOk(await tenant.admin.users.organizations()).organizations.map((o) => o.id)).toEqual([tenant.orgId]);
    const invite = await other.admin.users.inviteToOrg({
      body: { inviteeEmails: ["x@example.test"], organizationId: tenant.orgId, organizationRoleSlug: "member" },
    });
    expect(invite.status).toBe(404);
    const tooHigh = await (
      await createIdentity(tenant, { orgRole: "member" })
    ).client.users.inviteToOrg({
      body: { inviteeEmails: ["y@example.test"], organizationId: tenant.orgId, organizationRoleSlug: "admin" },
    });
    expect(tooHigh.status).toBe(403);
  });
});

describe("session lifetimes", () => {
  let app: TestApp;
  let tenant: Tenant;
  let offset = 0;
  beforeAll(async () => {
    app = await startTestApp({ SESSION_IDLE_TTL_S: "60", SESSION_ABSOLUTE_TTL_S: "150" });
    app.deps.clock.now = () => Date.now() + offset;
    tenant = await createTenant(app);
    await configureSso(tenant);
  });
  afterAll(() => app.close());

  it("ends a session left idle, and one past its absolute lifetime however it is used", async () => {
    offset = 0;
    const idle = await signIn(tenant, newPerson());
    offset = 61_000;
    expect((await refresh(app.baseUrl, idle.jar)).status).toBe(401);

    offset = 0;
    const busy = await signIn(tenant, newPerson());
    for (const at of [50_000, 100_000, 140_000]) {
      offset = at;
      expect((await refresh(app.baseUrl, busy.jar)).status).toBe(200);
    }
    offset = 151_000;
    expect((await refresh(app.baseUrl, busy.jar)).status).toBe(401);
    offset = 0;
  });
});
