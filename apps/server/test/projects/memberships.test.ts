import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";

const newOrgIdentity = async (tenant: Awaited<ReturnType<typeof createTenant>>) =>
  expectOk(
    await tenant.admin.identities.create({
      body: { name: uniqueName("m"), organizationId: tenant.orgId, role: "no-access" },
    }),
  ).identity;

describe("project identity memberships", () => {
  it("adds, reads, lists, updates and removes a membership", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const identity = await newOrgIdentity(tenant);
    const params = { projectId: project.id, identityId: identity.id };
    const added = expectOk(await tenant.admin.projects.addIdentityMembership({ params, body: { role: "viewer" } }));
    expect(added.identityMembership).toMatchObject({
      identityId: identity.id,
      projectId: project.id,
      identity: { name: identity.name },
    });
    expect(added.identityMembership.roles).toMatchObject([{ role: "viewer", isTemporary: false }]);

    expect(expectOk(await tenant.admin.projects.getIdentityMembership({ params })).identityMembership.id).toBe(
      added.identityMembership.id,
    );
    const list = expectOk(
      await tenant.admin.projects.listIdentityMemberships({ params: { projectId: project.id }, query: {} }),
    );
    expect(list.identityMemberships.map((m) => m.identityId)).toEqual(
      expect.arrayContaining([identity.id, tenant.adminIdentityId]),
    );

    const start = new Date().toISOString();
    const roles = expectOk(
      await tenant.admin.projects.updateIdentityMembership({
        params,
        body: {
          roles: [
            {
              role: "member",
              isTemporary: true,
              temporaryMode: "relative",
              temporaryRange: "1h",
              temporaryAccessStartTime: start,
            },
          ],
        },
      }),
    ).roles;
    expect(roles[0]).toMatchObject({
      role: "member",
      isTemporary: true,
      temporaryRange: "1h",
      temporaryAccessStartTime: start,
    });
    expect(new Date(roles[0]!.temporaryAccessEndTime!).getTime() - new Date(start).getTime()).toBe(3_600_000);

    expectOk(await tenant.admin.projects.deleteIdentityMembership({ params }));
    expect((await tenant.admin.projects.getIdentityMembership({ params })).status).toBe(404);
  });

  it("makes a temporary role count only inside its window", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const identity = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const params = { projectId: project.id, identityId: identity.id };
    const read = () => identity.client.projects.listEnvironments({ params: { projectId: project.id } });
    expect((await read()).status).toBe(403);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expectOk(
      await tenant.admin.projects.updateIdentityMembership({
        params,
        body: {
          roles: [
            {
              role: "viewer",
              isTemporary: true,
              temporaryMode: "relative",
              temporaryRange: "1h",
              temporaryAccessStartTime: future,
            },
          ],
        },
      }),
    );
    expect((await read()).status).toBe(403);
    expectOk(
      await tenant.admin.projects.updateIdentityMembership({
        params,
        body: {
          roles: [
            {
              role: "viewer",
              isTemporary: true,
              temporaryMode: "relative",
              temporaryRange: "2s",
              temporaryAccessStartTime: new Date().toISOString(),
            },
          ],
        },
      }),
    );
    expect((await read()).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await read()).status).toBe(403);
  });

  it("rejects duplicates and unknown roles (400), bad input (422), unknown identities (404)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const identity = await newOrgIdentity(tenant);
    const params = { projectId: project.id, identityId: identity.id };
    expect((await tenant.admin.projects.addIdentityMembership({ params, body: { role: "galactic" } })).status).toBe(
      400,
    );
    expectOk(await tenant.admin.projects.addIdentityMembership({ params, body: { role: "viewer" } }));
    const dup = await tenant.admin.projects.addIdentityMembership({ params, body: { role: "viewer" } });
    expect(dup.status).toBe(400);
    expect((await tenant.admin.projects.addIdentityMembership({ params, body: {} })).status).toBe(422);
    const badRange = await tenant.admin.projects.updateIdentityMembership({
      params,
      body: {
        roles: [
          {
            role: "viewer",
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "soon",
            temporaryAccessStartTime: new Date().toISOString(),
          },
        ],
      },
    });
    expect(badRange.status).toBe(422);
    const other = await createTenant();
    const foreign = await tenant.admin.projects.addIdentityMembership({
      params: { projectId: project.id, identityId: other.adminIdentityId },
      body: { role: "viewer" },
    });
    expect(foreign.status).toBe(404);
    const notMember = await tenant.admin.projects.getIdentityMembership({
      params: { projectId: project.id, identityId: (await newOrgIdentity(tenant)).id },
    });
    expect(notMember.status).toBe(404);
  });

  it("requires identity permissions (403) and never grants above the caller", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const target = await newOrgIdentity(tenant);
    const params = { projectId: project.id, identityId: target.id };
    const escalate = await member.client.projects.addIdentityMembership({ params, body: { role: "admin" } });
    expect(escalate.status).toBe(403);
    expect(escalate.body).toMatchObject({ error: "PermissionBoundaryError" });
    expect(
      (escalate.body as { details: { missingPermissions: unknown[] } }).details.missingPermissions.length,
    ).toBeGreaterThan(0);
    expect((await member.client.projects.addIdentityMembership({ params, body: { role: "viewer" } })).status).toBe(200);
    expect(
      (await viewer.client.projects.updateIdentityMembership({ params, body: { roles: [{ role: "viewer" }] } })).status,
    ).toBe(403);
    expect((await viewer.client.projects.deleteIdentityMembership({ params })).status).toBe(403);
    const nobody = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await nobody.client.projects.getIdentityMembership({ params })).status).toBe(403);
    expect(
      (await nobody.client.projects.listIdentityMemberships({ params: { projectId: project.id }, query: {} })).status,
    ).toBe(403);
  });
});
