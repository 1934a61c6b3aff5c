import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, signIn } from "../sso/sso-helpers";

const READ_SECRETS = [{ subject: "secrets" as const, action: ["read" as const] }];

describe("a person's additional privileges", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
  });

  /** A signed-in person with no role in a new project (`no-access`), and their project membership. */
  const personInProject = async () => {
    const email = `${uniqueName("person")}@example.test`;
    const session = await signIn(tenant, { sub: `sub-${email}`, email });
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    expectOk(
      await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [email], roleSlugs: ["no-access"] } }),
    );
    const membershipId = expectOk(await tenant.admin.users.listProjectMemberships({ params })).memberships[0]!.id;
    return { session, project, membershipId };
  };

  it("grants, reads, re-times and revokes a privilege that the person's reads follow", async () => {
    const { session, project, membershipId } = await personInProject();
    const list = () =>
      session.client.secretsV3.list({ query: { workspaceId: project.id, environment: "dev", secretPath: "/" } });
    expect((await list()).status).toBe(403);

    const { privilege } = expectOk(
      await tenant.admin.userPrivileges.create({
        body: { projectMembershipId: membershipId, slug: "read-secrets", permissions: READ_SECRETS },
      }),
    );
    expect(privilege).toMatchObject({ slug: "read-secrets", projectId: project.id, isTemporary: false });
    expect((await list()).status).toBe(200);
    const params = { privilegeId: privilege.id };
    expect(expectOk(await tenant.admin.userPrivileges.get({ params })).privilege.id).toBe(privilege.id);
    expect(
      expectOk(await tenant.admin.userPrivileges.list({ query: { projectMembershipId: membershipId } })).privileges,
    ).toEqual([expect.objectContaining({ id: privilege.id, isLinkedToAccessApproval: false })]);

    // A window that has already ended takes the access away.
    const ended = expectOk(
      await tenant.admin.userPrivileges.update({
        params,
        body: {
          type: {
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "1s",
            temporaryAccessStartTime: new Date(Date.now() - 60_000).toISOString(),
          },
        },
      }),
    );
    expect(ended.privilege.isTemporary).toBe(true);
    expect((await list()).status).toBe(403);

    expectOk(await tenant.admin.userPrivileges.delete({ params }));
    expect((await tenant.admin.userPrivileges.get({ params })).status).toBe(404);
  });

  it("refuses callers without the right, grants beyond the caller's own, and another organization's", async () => {
    const { project, membershipId } = await personInProject();
    const body = { projectMembershipId: membershipId, permissions: READ_SECRETS };
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.userPrivileges.create({ body })).status).toBe(403);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    const tooMuch = await member.client.userPrivileges.create({
      body: { ...body, permissions: [{ subject: "member" as const, action: ["delete" as const] }] },
    });
    expect(tooMuch.status).toBe(403);
    const other = await createTenant();
    expect((await other.admin.userPrivileges.create({ body })).status).toBe(404);
    expect((await tenant.admin.userPrivileges.get({ params: { privilegeId: "not-an-id" } })).status).toBe(404);
    const { privilege } = expectOk(await tenant.admin.userPrivileges.create({ body: { ...body, slug: "once" } }));
    expect((await tenant.admin.userPrivileges.create({ body: { ...body, slug: "once" } })).status).toBe(400);
    expect((await other.admin.userPrivileges.delete({ params: { privilegeId: privilege.id } })).status).toBe(404);
  });
});
