import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

describe("project lookup by slug", () => {
  it("answers the project itself as the body, on both paths", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const v1 = expectOk(await tenant.admin.projects.getBySlug({ params: { slug: project.slug } }));
    expect(v1).toEqual(project);
    expect(v1.environments.map((e) => e.slug)).toEqual(["dev", "staging", "prod"]);
    const v2 = expectOk(await tenant.admin.projects.getBySlugV2({ params: { slug: project.slug } }));
    expect(v2).toEqual(project);
  });

  it("finds a project whose slug is also the name of a project sub-resource", async () => {
    const tenant = await createTenant();
    for (const slug of ["identities", "groups", "roles"]) {
      const { project } = expectOk(await tenant.admin.projects.create({ body: { projectName: slug, slug } }));
      expect(expectOk(await tenant.admin.projects.getBySlug({ params: { slug } })).id).toBe(project.id);
    }
  });

  it("answers 404 for an unknown slug and for another organization's project", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const foreign = await createProject(other);
    for (const slug of [foreign.slug, "no-such-project", "Not A Slug"]) {
      for (const lookup of [tenant.admin.projects.getBySlug, tenant.admin.projects.getBySlugV2]) {
        const res = await lookup({ params: { slug } });
        expect(res).toMatchObject({
          status: 404,
          body: { statusCode: 404, error: "NotFound", message: `Project with slug ${slug} not found` },
        });
        expect(JSON.stringify(res.body)).not.toContain(foreign.id);
      }
    }
  });

  it("answers 403 to an identity that is no member of the project and 401 without a token", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const outsider = await createIdentity(tenant, { orgRole: "member" });
    for (const lookup of [outsider.client.projects.getBySlug, outsider.client.projects.getBySlugV2]) {
      const res = await lookup({ params: { slug: project.slug } });
      expect(res).toMatchObject({ status: 403, body: { error: "ProjectMembershipNotFound" } });
    }
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect(expectOk(await member.client.projects.getBySlug({ params: { slug: project.slug } })).id).toBe(project.id);
    expect((await tenant.anonymous.projects.getBySlug({ params: { slug: project.slug } })).status).toBe(401);
    expect((await tenant.anonymous.projects.getBySlugV2({ params: { slug: project.slug } })).status).toBe(401);
  });
});

describe("project list on the legacy path", () => {
  it("lists the caller's projects with _id equal to id, as infisical init reads them", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { workspaces } = expectOk(await tenant.admin.projects.listWorkspaces({ query: {} }));
    expect(workspaces).toEqual([{ ...project, _id: project.id }]);
  });

  it("lists only projects the identity is a member of, never another organization's", async () => {
    const tenant = await createTenant();
    const joined = await createProject(tenant);
    const notJoined = await createProject(tenant);
    const other = await createTenant();
    await createProject(other);
    const member = await createIdentity(tenant, { orgRole: "member", projectId: joined.id, projectRole: "no-access" });
    const listed = expectOk(await member.client.projects.listWorkspaces({ query: {} })).workspaces;
    expect(listed.map((p) => p._id)).toEqual([joined.id]);
    const outsider = await createIdentity(tenant, { orgRole: "member" });
    expect(expectOk(await outsider.client.projects.listWorkspaces({ query: {} })).workspaces).toEqual([]);
    const all = expectOk(await tenant.admin.projects.listWorkspaces({ query: {} })).workspaces;
    expect(all.map((p) => p.id).sort()).toEqual([joined.id, notJoined.id].sort());
    expect((await tenant.anonymous.projects.listWorkspaces({ query: {} })).status).toBe(401);
  });

  it("filters by type, where all (the MCP server's default) and an empty type filter nothing", async () => {
    const tenant = await createTenant();
    const secrets = await createProject(tenant);
    const certs = await createProject(tenant, "cert-manager");
    const ids = async (type?: "cert-manager" | "secret-manager" | "kms" | "all") =>
      expectOk(await tenant.admin.projects.listWorkspaces({ query: type ? { type } : {} })).workspaces.map((p) => p.id);
    expect(await ids("cert-manager")).toEqual([certs.id]);
    expect(await ids("secret-manager")).toEqual([secrets.id]);
    expect(await ids("kms")).toEqual([]);
    expect((await ids("all")).sort()).toEqual([secrets.id, certs.id].sort());
    expect((await ids()).sort()).toEqual([secrets.id, certs.id].sort());
    const empty = await fetch(`${tenant.app.baseUrl}/api/v1/workspace?type=`, {
      headers: { authorization: `Bearer ${tenant.adminToken}` },
    });
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as { workspaces: unknown[] }).workspaces).toHaveLength(2);
    const bad = await tenant.admin.projects.listWorkspaces({ query: { type: "nope" as never } });
    expect(bad).toMatchObject({ status: 422, body: { error: "ValidationFailure" } });
    // The newer path takes the same filter.
    const newer = expectOk(await tenant.admin.projects.list({ query: { type: "all" } })).projects;
    expect(newer.map((p) => p.id).sort()).toEqual([secrets.id, certs.id].sort());
  });
});
