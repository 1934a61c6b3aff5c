import { beforeAll, describe, expect, it } from "vitest";
import { insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { configureSso, newPerson, refresh, signedInPerson } from "../sso/sso-helpers";

describe("invitations give no more than the inviter holds", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
  });

  it("refuses to invite into a project with a role beyond the inviter's rights there", async () => {
    const project = await createProject(tenant);
    const memberManager = await insertCustomRole(tenant, project.id, [
      { subject: "member", action: ["read", "create"], inverted: false },
    ]);
    // An org admin identity that, in this project, may only read and add members.
    const inviter = await createIdentity(tenant, {
      orgRole: "admin",
      projectId: project.id,
      projectRole: memberManager,
    });
    const bob = await signedInPerson(tenant);
    const direct = await inviter.client.users.inviteProjectMembers({
      params: { projectId: project.id },
      body: { emails: [bob.email] },
    });
    expect(direct.status).toBe(403);

    const invitee = newPerson();
    const invited = await inviter.client.users.inviteToOrg({
      body: {
        inviteeEmails: [invitee.email],
        organizationId: tenant.orgId,
        organizationRoleSlug: "member",
        projectIds: [project.id],
      },
    });
    expect(invited.status).toBe(403);
    expect(invited.body).toMatchObject({
      message: "Failed to assign role to user. Actor privilege level is not high enough to perform this action",
    });
    const people = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
    expect(people.some((m) => m.inviteEmail === invitee.email)).toBe(false);

    // Without projects, or by someone who may give the role, the invitation is made.
    expectOk(
      await inviter.client.users.inviteToOrg({
        body: { inviteeEmails: [invitee.email], organizationId: tenant.orgId, organizationRoleSlug: "member" },
      }),
    );
    expectOk(
      await tenant.admin.users.inviteToOrg({
        body: {
          inviteeEmails: [invitee.email],
          organizationId: tenant.orgId,
          organizationRoleSlug: "member",
          projectIds: [project.id],
        },
      }),
    );
  });

  it("an expired invitation is not claimed at sign-in", async () => {
    const project = await createProject(tenant);
    const invitee = newPerson();
    expectOk(
      await tenant.admin.users.inviteToOrg({
        body: {
          inviteeEmails: [invitee.email],
          organizationId: tenant.orgId,
          organizationRoleSlug: "admin",
          projectIds: [project.id],
        },
      }),
    );
    await tenant.app.deps.db
      .updateTable("org_user_memberships")
      .set({ invite_expires_at: new Date(Date.now() - 1000) })
      .where("org_id", "=", tenant.orgId)
      .where("invite_email", "=", invitee.email)
      .execute();
    const person = await signedInPerson(tenant, invitee);
    expect(person.membership).toMatchObject({ role: "no-access", status: "accepted" });
    expect(expectOk(await person.client.projects.listWorkspaces({ query: {} })).workspaces).toEqual([]);
  });
});

describe("an organization keeps an active admin person", () => {
  const adminPerson = async (tenant: Tenant) => {
    const person = await signedInPerson(tenant);
    const params = { orgId: tenant.orgId, membershipId: person.membership.id };
    expectOk(await tenant.admin.users.updateOrgMembership({ params, body: { role: "admin" } }));
    return { ...person, params };
  };

  it("two admins deactivating each other at once: one wins, the other is refused", async () => {
    const tenant = await createTenant();
    await configureSso(tenant);
    // A third admin person, so the rule that keeps one active admin never decides a round.
    await adminPerson(tenant);
    for (let round = 0; round < 4; round++) {
      const [a, b] = await Promise.all([adminPerson(tenant), adminPerson(tenant)]);
      const answers = await Promise.all([
        a.client.users.updateOrgMembership({ params: b.params, body: { isActive: false } }),
        b.client.users.updateOrgMembership({ params: a.params, body: { isActive: false } }),
      ]);
      // The loser is refused: its own membership was deactivated first (403), or its session ended (401).
      const seen = JSON.stringify(answers.map((r) => r.body));
      expect(
        answers.filter((r) => r.status === 200),
        seen,
      ).toHaveLength(1);
      expect(
        answers.filter((r) => r.status === 401 || r.status === 403),
        seen,
      ).toHaveLength(1);
      const people = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
      const pair = people.filter((m) => m.id === a.membership.id || m.id === b.membership.id);
      expect(pair.filter((m) => m.isActive)).toHaveLength(1);
    }
  });

  it("refuses to deactivate, demote or remove the last active admin person", async () => {
    const tenant = await createTenant();
    await configureSso(tenant);
    const last = await adminPerson(tenant);
    const message = "The organization must keep at least one active admin: make someone else an admin first";
    for (const body of [{ isActive: false }, { role: "member" }]) {
      const refused = await tenant.admin.users.updateOrgMembership({ params: last.params, body });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ message });
    }
    const removal = await tenant.admin.users.deleteOrgMembership({ params: last.params });
    expect(removal.status).toBe(400);
    expect((await last.client.users.me()).status).toBe(200);
    // With a second admin person, the first may go.
    await adminPerson(tenant);
    expectOk(await tenant.admin.users.updateOrgMembership({ params: last.params, body: { isActive: false } }));
    expect((await refresh(tenant.app.baseUrl, last.jar)).status).toBe(401);
  });
});
