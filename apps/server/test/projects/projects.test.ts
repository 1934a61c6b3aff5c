import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

describe("projects", () => {
  it("creates a secret-manager project with dev, staging and prod, on both paths", async () => {
    const tenant = await createTenant();
    const v1 = expectOk(
      await tenant.admin.projects.create({ body: { projectName: "Payments", projectDescription: "cards" } }),
    );
    expect(v1.project).toMatchObject({
      name: "Payments",
      description: "cards",
      type: "secret-manager",
      orgId: tenant.orgId,
    });
    expect(v1.project.environments.map((e) => e.slug)).toEqual(["dev", "staging", "prod"]);
    const v2 = expectOk(
      await tenant.admin.projects.createV2({
        body: { projectName: "Ledger", slug: "ledger-main", type: "cert-manager" },
      }),
    );
    expect(v2.project).toMatchObject({ slug: "ledger-main", type: "cert-manager", environments: [] });
  });

  it("gets, lists and deletes projects", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    expect(expectOk(await tenant.admin.projects.get({ params: { projectId: project.id } })).project.id).toBe(
      project.id,
    );
    const list = expectOk(await tenant.admin.projects.list({ query: {} }));
    expect(list.projects.map((p) => p.id)).toContain(project.id);
    expect(expectOk(await tenant.admin.projects.delete({ params: { projectId: project.id } })).project.id).toBe(
      project.id,
    );
    expect((await tenant.admin.projects.get({ params: { projectId: project.id } })).status).toBe(404);
  });

  it("refuses a duplicate slug (400), bad input (422) and an unknown template (404)", async () => {
    const tenant = await createTenant();
    expectOk(await tenant.admin.projects.create({ body: { projectName: "A", slug: "dup-slug" } }));
    const dup = await tenant.admin.projects.create({ body: { projectName: "B", slug: "dup-slug" } });
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ message: "A project with the slug dup-slug already exists" });
    expect((await tenant.admin.projects.create({ body: { projectName: "" } })).status).toBe(422);
    expect((await tenant.admin.projects.create({ body: { projectName: "x", type: "nope" as never } })).status).toBe(
      422,
    );
    expect((await tenant.admin.projects.create({ body: { projectName: "x", template: "missing" } })).status).toBe(404);
  });

  it("requires org permission to create (403) and membership to read", async () => {
    const tenant = await createTenant();
    const nobody = await createIdentity(tenant, { orgRole: "no-access" });
    const res = await nobody.client.projects.create({ body: { projectName: "x" } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ message: "You are not allowed to create on workspace" });
    const project = await createProject(tenant);
    const read = await nobody.client.projects.get({ params: { projectId: project.id } });
    expect(read.status).toBe(403);
    expect(read.body).toMatchObject({ error: "ProjectMembershipNotFound" });
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    expect((await member.client.projects.delete({ params: { projectId: project.id } })).status).toBe(403);
  });
});

describe("environments", () => {
  it("creates, lists, moves, renames and deletes environments, keeping positions 1..n", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    const created = expectOk(
      await tenant.admin.projects.createEnvironment({ params, body: { name: "QA", slug: "qa", position: 2 } }),
    );
    expect(created.environment).toMatchObject({ slug: "qa", position: 2 });
    const order = async () =>
      expectOk(await tenant.admin.projects.listEnvironments({ params })).environments.map(
        (e) => `${e.slug}:${e.position}`,
      );
    expect(await order()).toEqual(["dev:1", "qa:2", "staging:3", "prod:4"]);
    const moved = expectOk(
      await tenant.admin.projects.updateEnvironment({
        params: { ...params, environmentId: created.environment.id },
        body: { position: 4, name: "Quality" },
      }),
    );
    expect(moved.environment).toMatchObject({ name: "Quality", position: 4 });
    expect(await order()).toEqual(["dev:1", "staging:2", "prod:3", "qa:4"]);
    const devId = expectOk(await tenant.admin.projects.listEnvironments({ params })).environments.find(
      (e) => e.slug === "dev",
    )!.id;
    expectOk(await tenant.admin.projects.deleteEnvironment({ params: { ...params, environmentId: devId } }));
    expect(await order()).toEqual(["staging:1", "prod:2", "qa:3"]);
  });

  it("keeps positions unique under parallel creates", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        tenant.admin.projects.createEnvironment({ params, body: { name: `E${i}`, slug: `e${i}`, position: 1 } }),
      ),
    );
    expect(created.every((r) => r.status === 200)).toBe(true);
    const positions = expectOk(await tenant.admin.projects.listEnvironments({ params })).environments.map(
      (e) => e.position,
    );
    expect(positions).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
  });

  it("rejects duplicate slugs (400), bad slugs (422) and unknown ids (404)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    const dup = await tenant.admin.projects.createEnvironment({ params, body: { name: "Dev 2", slug: "dev" } });
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ message: "Environment with slug 'dev' already exist" });
    expect(
      (await tenant.admin.projects.createEnvironment({ params, body: { name: "x", slug: "Not A Slug!" } })).status,
    ).toBe(422);
    const missing = await tenant.admin.projects.updateEnvironment({
      params: { ...params, environmentId: "nope" },
      body: { name: "x" },
    });
    expect(missing.status).toBe(404);
    expect(
      (
        await tenant.admin.projects.deleteEnvironment({
          params: { ...params, environmentId: "00000000-0000-4000-8000-000000000000" },
        })
      ).status,
    ).toBe(404);
  });

  it("requires the environments permission (403)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const params = { projectId: project.id };
    expect((await viewer.client.projects.listEnvironments({ params })).status).toBe(200);
    const denied = await viewer.client.projects.createEnvironment({ params, body: { name: "x", slug: "x" } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to create on environments" });
    const envId = project.environments[0]!.id;
    expect(
      (
        await viewer.client.projects.updateEnvironment({
          params: { ...params, environmentId: envId },
          body: { name: "x" },
        })
      ).status,
    ).toBe(403);
    expect(
      (await viewer.client.projects.deleteEnvironment({ params: { ...params, environmentId: envId } })).status,
    ).toBe(403);
  });
});
