import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/tenant";
import { createSecretsScope, expectOk, identityWithRules, putSecret } from "./helpers";

const RAW = "/api/v3/secrets/raw";

describe("secret tags", () => {
  it("creates, lists, reads by id and slug, renames and deletes a tag under /projects", async () => {
    const { tenant, projectId } = await createSecretsScope();
    const tags = tenant.admin.secretTags.projects;
    const { tag } = expectOk(await tags.create({ params: { projectId }, body: { slug: "  Backend ", color: "" } }));
    expect(tag).toMatchObject({ slug: "backend", name: "backend", color: "", projectId });
    const list = expectOk(await tags.list({ params: { projectId } }));
    expect(list.tags.map((t) => t.id)).toEqual([tag.id]);
    expect(list.workspaceTags).toEqual(list.tags);
    expect(expectOk(await tags.get({ params: { projectId, tagId: tag.id } })).tag.slug).toBe("backend");
    expect(expectOk(await tags.getBySlug({ params: { projectId, tagSlug: "backend" } })).tag.id).toBe(tag.id);
    const renamed = expectOk(
      await tags.update({ params: { projectId, tagId: tag.id }, body: { slug: "api", color: "#fff" } }),
    );
    expect(renamed.tag).toMatchObject({ id: tag.id, slug: "api", name: "api", color: "#fff" });
    expect(expectOk(await tags.delete({ params: { projectId, tagId: tag.id } })).tag.id).toBe(tag.id);
    expect((await tags.get({ params: { projectId, tagId: tag.id } })).status).toBe(404);
    expect(expectOk(await tags.list({ params: { projectId } })).tags).toEqual([]);
  });

  it("serves the same tags under the older /workspace prefix", async () => {
    const { tenant, projectId } = await createSecretsScope();
    const { tag } = expectOk(
      await tenant.admin.secretTags.workspace.create({ params: { projectId }, body: { slug: "web", color: "red" } }),
    );
    const viaProjects = expectOk(await tenant.admin.secretTags.projects.get({ params: { projectId, tagId: tag.id } }));
    expect(viaProjects.tag).toEqual(tag);
    const viaWorkspace = tenant.admin.secretTags.workspace;
    expect(expectOk(await viaWorkspace.getBySlug({ params: { projectId, tagSlug: "web" } })).tag.id).toBe(tag.id);
    expect(expectOk(await viaWorkspace.list({ params: { projectId } })).tags).toHaveLength(1);
    expect(
      expectOk(await viaWorkspace.update({ params: { projectId, tagId: tag.id }, body: { color: "blue" } })).tag,
    ).toMatchObject({ slug: "web", color: "blue" });
    expectOk(await viaWorkspace.delete({ params: { projectId, tagId: tag.id } }));
  });

  it("refuses a duplicate slug with 400, on create and on rename", async () => {
    const { tenant, projectId } = await createSecretsScope();
    const tags = tenant.admin.secretTags.projects;
    expectOk(await tags.create({ params: { projectId }, body: { slug: "one", color: "" } }));
    const { tag: two } = expectOk(await tags.create({ params: { projectId }, body: { slug: "two", color: "" } }));
    const again = await tags.create({ params: { projectId }, body: { slug: "one", color: "" } });
    expect(again).toMatchObject({ status: 400, body: { message: "Tag with slug 'one' already exists" } });
    const rename = await tags.update({ params: { projectId, tagId: two.id }, body: { slug: "one" } });
    expect(rename).toMatchObject({ status: 400, body: { message: "Tag with slug 'one' already exists" } });
  });

  it("rejects bad slugs and a missing colour with 422", async () => {
    const { tenant, projectId } = await createSecretsScope();
    const tags = tenant.admin.secretTags.projects;
    for (const slug of ["", "a b", "x".repeat(65)])
      expect((await tags.create({ params: { projectId }, body: { slug, color: "" } })).status).toBe(422);
    const noColor = await tags.create({ params: { projectId }, body: { slug: "ok" } as never });
    expect(noColor.status).toBe(422);
  });

  it("answers 404 for unknown ids and slugs", async () => {
    const { tenant, projectId } = await createSecretsScope();
    const tags = tenant.admin.secretTags.projects;
    const missing = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";
    expect((await tags.get({ params: { projectId, tagId: missing } })).status).toBe(404);
    expect((await tags.get({ params: { projectId, tagId: "not-a-uuid" } })).status).toBe(404);
    const bySlug = await tags.getBySlug({ params: { projectId, tagSlug: "nope" } });
    expect(bySlug).toMatchObject({ status: 404, body: { message: "Tag with slug 'nope' not found" } });
    expect((await tags.update({ params: { projectId, tagId: missing }, body: { color: "" } })).status).toBe(404);
    expect((await tags.delete({ params: { projectId, tagId: missing } })).status).toBe(404);
  });

  it("needs the tags permission for each action", async () => {
    const scope = await createSecretsScope();
    const { projectId } = scope;
    const { tag } = expectOk(
      await scope.tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "t", color: "" } }),
    );
    const nobody = await identityWithRules(scope, []);
    const tags = nobody.client.secretTags.projects;
    expect((await tags.list({ params: { projectId } })).status).toBe(403);
    expect((await tags.get({ params: { projectId, tagId: tag.id } })).status).toBe(403);
    expect((await tags.getBySlug({ params: { projectId, tagSlug: "t" } })).status).toBe(403);
    expect((await tags.create({ params: { projectId }, body: { slug: "u", color: "" } })).status).toBe(403);
    expect((await tags.update({ params: { projectId, tagId: tag.id }, body: { color: "x" } })).status).toBe(403);
    expect((await tags.delete({ params: { projectId, tagId: tag.id } })).status).toBe(403);
    const reader = await identityWithRules(scope, [{ subject: "tags", action: ["read"], inverted: false }]);
    expect((await reader.client.secretTags.projects.list({ params: { projectId } })).status).toBe(200);
    const create = await reader.client.secretTags.projects.create({
      params: { projectId },
      body: { slug: "v", color: "" },
    });
    expect(create).toMatchObject({ status: 403, body: { message: "You are not allowed to create on tags" } });
  });

  it("hides another tenant's tags behind 404", async () => {
    const { tenant, projectId } = await createSecretsScope();
    const { tag } = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "mine", color: "" } }),
    );
    const other = (await createTenant()).admin.secretTags.projects;
    expect((await other.list({ params: { projectId } })).status).toBe(404);
    expect((await other.get({ params: { projectId, tagId: tag.id } })).status).toBe(404);
    expect((await other.getBySlug({ params: { projectId, tagSlug: "mine" } })).status).toBe(404);
    expect((await other.create({ params: { projectId }, body: { slug: "x", color: "" } })).status).toBe(404);
    expect((await other.update({ params: { projectId, tagId: tag.id }, body: { color: "" } })).status).toBe(404);
    expect((await other.delete({ params: { projectId, tagId: tag.id } })).status).toBe(404);
  });

  it("links tags to secrets by id, replaces them on update and filters lists by slug", async () => {
    const { tenant, projectId, http } = await createSecretsScope();
    const tags = tenant.admin.secretTags.projects;
    const a = expectOk(await tags.create({ params: { projectId }, body: { slug: "a", color: "" } })).tag;
    const b = expectOk(await tags.create({ params: { projectId }, body: { slug: "b", color: "#0f0" } })).tag;
    await putSecret(http, projectId, "TAGGED_A", "1", { tagIds: [a.id] });
    await putSecret(http, projectId, "TAGGED_AB", "2", { tagIds: [a.id, b.id] });
    await putSecret(http, projectId, "PLAIN", "3");
    const list = async (tagSlugs?: string) => {
      const query = { workspaceId: projectId, environment: "dev", ...(tagSlugs ? { tagSlugs } : {}) };
      const secrets = (await http.get(RAW, query)).body.secrets as { secretKey: string }[];
      return secrets.map((s) => s.secretKey).sort();
    };
    expect(await list()).toEqual(["PLAIN", "TAGGED_A", "TAGGED_AB"]);
    expect(await list("a")).toEqual(["TAGGED_A", "TAGGED_AB"]);
    expect(await list(" b , zzz")).toEqual(["TAGGED_AB"]);
    const got = await http.get(`${RAW}/TAGGED_AB`, { workspaceId: projectId, environment: "dev" });
    expect(got.body.secret.tags).toEqual([
      { id: a.id, slug: "a", name: "a", color: "" },
      { id: b.id, slug: "b", name: "b", color: "#0f0" },
    ]);
    const replace = await http.patch(`${RAW}/TAGGED_AB`, {
      workspaceId: projectId,
      environment: "dev",
      tagIds: [b.id],
    });
    expect(replace.status).toBe(200);
    expect(await list("a")).toEqual(["TAGGED_A"]);
    await http.patch(`${RAW}/TAGGED_A`, { workspaceId: projectId, environment: "dev", tagIds: [] });
    expect(await list("a")).toEqual([]);
    expectOk(await tags.delete({ params: { projectId, tagId: b.id } }));
    const untagged = await http.get(`${RAW}/TAGGED_AB`, { workspaceId: projectId, environment: "dev" });
    expect(untagged.body.secret.tags).toEqual([]);
  });

  it("refuses another project's tag id on a secret write", async () => {
    const { tenant, projectId, http } = await createSecretsScope();
    const otherProject = await tenant.admin.projects.create({
      body: { projectName: "other-tags", type: "secret-manager" },
    });
    const otherId = expectOk(otherProject).project.id;
    const foreign = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId: otherId }, body: { slug: "f", color: "" } }),
    ).tag;
    const res = await http.post(`${RAW}/X`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "v",
      tagIds: [foreign.id],
    });
    expect(res).toMatchObject({ status: 404, body: { message: "Tag not found. Found " } });
  });

  it("reads tag ids in any letter case, on single and batch writes", async () => {
    const { tenant, projectId, http } = await createSecretsScope();
    const tag = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "mixed", color: "" } }),
    ).tag;
    const tagIds = [tag.id.toUpperCase(), tag.id];
    const base = { projectId, environment: "dev", secretPath: "/" };
    const batch = await http.post("/api/v4/secrets/batch", {
      ...base,
      secrets: [{ secretKey: "B", secretValue: "v", tagIds }],
    });
    expect(batch.status).toBe(200);
    const single = await http.post("/api/v4/secrets/S", { ...base, secretValue: "v", tagIds });
    expect(single.status).toBe(200);
    const upsert = await http.patch("/api/v4/secrets/batch", {
      ...base,
      mode: "upsert",
      secrets: [{ secretKey: "U", secretValue: "v", tagIds }],
    });
    expect(upsert.status).toBe(200);
    for (const key of ["B", "S", "U"]) {
      const got = await http.get(`/api/v4/secrets/${key}`, base);
      expect((got.body.secret.tags as { id: string }[]).map((t) => t.id)).toEqual([tag.id]);
    }
  });
});
