import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

describe("project-owned identities", () => {
  it("creates an identity with no-access on the org and the project", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { identity } = expectOk(
      await tenant.admin.projectIdentities.create({
        params: { projectId: project.id },
        body: { name: "ci-runner", metadata: [{ key: "env", value: "ci" }] },
      }),
    );
    expect(identity).toMatchObject({
      name: "ci-runner",
      orgId: tenant.orgId,
      projectId: project.id,
      hasDeleteProtection: false,
      authMethods: [],
      role: "no-access",
    });
    expect(identity.metadata).toEqual([{ id: expect.any(String), key: "env", value: "ci" }]);
    const membership = expectOk(
      await tenant.admin.projects.getIdentityMembership({ params: { projectId: project.id, identityId: identity.id } }),
    );
    expect(membership.identityMembership.roles.map((r) => r.role)).toEqual(["no-access"]);
  });

  it("lists, reads, updates and deletes project identities", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { identity } = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "a" } }),
    );
    const list = expectOk(await tenant.admin.projectIdentities.list({ params: { projectId: project.id }, query: {} }));
    expect(list).toMatchObject({ totalCount: 1, identities: [{ id: identity.id }] });
    const params = { projectId: project.id, identityId: identity.id };
    expect(expectOk(await tenant.admin.projectIdentities.get({ params })).identity.name).toBe("a");
    const updated = expectOk(
      await tenant.admin.projectIdentities.update({ params, body: { name: "b", hasDeleteProtection: true } }),
    );
    expect(updated.identity).toMatchObject({ name: "b", hasDeleteProtection: true });
    expect((await tenant.admin.projectIdentities.delete({ params })).status).toBe(400);
    expectOk(await tenant.admin.projectIdentities.update({ params, body: { hasDeleteProtection: false } }));
    expectOk(await tenant.admin.projectIdentities.delete({ params }));
    expect((await tenant.admin.projectIdentities.get({ params })).status).toBe(404);
  });

  it("validates the body (422) and the project (404)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    expect(
      (await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "" } })).status,
    ).toBe(422);
    const missing = await tenant.admin.projectIdentities.create({
      params: { projectId: "00000000-0000-4000-8000-000000000000" },
      body: { name: "a" },
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: "Project with 00000000-0000-4000-8000-000000000000 not found" });
    const other = await createTenant();
    const foreign = await other.admin.projectIdentities.create({
      params: { projectId: project.id },
      body: { name: "a" },
    });
    expect(foreign.status).toBe(404);
  });

  it("answers 404 for an identity outside the project", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const orgIdentity = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const res = await tenant.admin.projectIdentities.get({
      params: { projectId: project.id, identityId: orgIdentity.id },
    });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ message: `Identity with id ${orgIdentity.id} not found` });
  });

  it("requires project permission on identity (403) and membership", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const outsider = await createIdentity(tenant, { orgRole: "admin" });
    const denied = await viewer.client.projectIdentities.create({
      params: { projectId: project.id },
      body: { name: "a" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on identity",
    });
    const notMember = await outsider.client.projectIdentities.create({
      params: { projectId: project.id },
      body: { name: "a" },
    });
    expect(notMember.status).toBe(403);
    expect(notMember.body).toMatchObject({ error: "ProjectMembershipNotFound" });
    const { identity } = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "x" } }),
    );
    const params = { projectId: project.id, identityId: identity.id };
    expect((await viewer.client.projectIdentities.get({ params })).status).toBe(200);
    expect((await viewer.client.projectIdentities.update({ params, body: { name: "y" } })).status).toBe(403);
    expect((await viewer.client.projectIdentities.delete({ params })).status).toBe(403);
    const nobody = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await nobody.client.projectIdentities.list({ params: { projectId: project.id }, query: {} })).status).toBe(
      403,
    );
  });
});
