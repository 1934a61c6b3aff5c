import { describe, expect, it } from "vitest";
import { addImport, createFolder, createSecretsScope, putSecret, type RawHttp } from "./helpers";

type Listed = {
  secrets: { secretKey: string; secretValue: string; type: string }[];
  imports: { secrets: { secretKey: string; secretValue: string }[] }[];
};

/** The CLI's merge: folder secrets first, then imports from the last to the first. */
const cliMerge = (body: Listed) => {
  const env = new Map(body.secrets.map((s) => [s.secretKey, s.secretValue]));
  for (const imp of [...body.imports].reverse())
    for (const s of imp.secrets) if (!env.has(s.secretKey)) env.set(s.secretKey, s.secretValue);
  return Object.fromEntries(env);
};

/** `infisical run/export/secrets`: GET /api/v4/secrets with the CLI's camelCase flags and an empty path. */
const cliList = (http: RawHttp, projectId: string, flags: Partial<Record<string, string>> = {}) =>
  http.call("GET", "/api/v4/secrets", {
    query: {
      projectId,
      environment: "dev",
      secretPath: "",
      includeImports: "true",
      recursive: "false",
      expandSecretReferences: "true",
      includePersonalOverrides: "true",
      ...flags,
    },
    headers: { "user-agent": "infisical-cli/0.0.0" },
  });

describe("the Infisical CLI's requests replayed against Keyward", () => {
  it("run/export list with imports merged last-import-first, folder secrets winning", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    await createFolder(tenant, projectId, "dev", "/", "first");
    await createFolder(tenant, projectId, "dev", "/", "second");
    await putSecret(http, projectId, "SHARED", "from-first", { secretPath: "/first" });
    await putSecret(http, projectId, "ONLY_FIRST", "f", { secretPath: "/first" });
    await putSecret(http, projectId, "SHARED", "from-second", { secretPath: "/second" });
    await putSecret(http, projectId, "OWN", "mine");
    await putSecret(http, projectId, "REF", "${OWN}-x");
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/first" });
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/second" });

    const res = await cliList(http, projectId);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBeTruthy();
    expect(cliMerge(res.body as Listed)).toEqual({
      OWN: "mine",
      REF: "mine-x",
      SHARED: "from-second",
      ONLY_FIRST: "f",
    });
    const raw = await cliList(http, projectId, { expandSecretReferences: "false", includeImports: "false" });
    expect(cliMerge(raw.body as Listed)).toEqual({ OWN: "mine", REF: "${OWN}-x" });
    const single = await http.get("/api/v4/secrets/SHARED", {
      projectId,
      environment: "dev",
      secretPath: "/",
      type: "shared",
      expandSecretReferences: "true",
      includeImports: "true",
    });
    expect(single.body.secret).toMatchObject({
      secretKey: "SHARED",
      secretValue: "from-second",
      secretPath: "/second",
    });
    expect(single.headers.get("etag")).toBeTruthy();
  });

  it("secrets set: tag looked up by slug (404), created, then the secret created (POST) and changed (PATCH)", async () => {
    const { http, projectId } = await createSecretsScope();
    const lookup = await http.get(`/api/v1/projects/${projectId}/tags/slug/backend`);
    expect(lookup.status).toBe(404);
    const tag = await http.post(`/api/v1/projects/${projectId}/tags`, { slug: "backend", color: "" });
    expect(tag.status).toBe(200);
    expect(tag.body.tag).toMatchObject({ slug: "backend", name: "backend" });
    const again = await http.get(`/api/v1/projects/${projectId}/tags/slug/backend`);
    expect(again.body.tag.id).toBe(tag.body.tag.id);

    const existing = await cliList(http, projectId, {
      includeImports: "false",
      includePersonalOverrides: "false",
      expandSecretReferences: "false",
    });
    expect((existing.body as Listed).secrets).toEqual([]);
    const created = await http.post("/api/v3/secrets/raw/API_KEY", {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "k1",
      type: "shared",
      tagIds: [tag.body.tag.id],
    });
    expect(created.status).toBe(200);
    const changed = await http.patch("/api/v3/secrets/raw/API_KEY", {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "k2",
      type: "shared",
      tagIds: [tag.body.tag.id],
    });
    expect(changed.status).toBe(200);
    const tagged = await cliList(http, projectId, { tagSlugs: "backend" });
    expect((tagged.body as Listed).secrets).toMatchObject([
      { secretKey: "API_KEY", secretValue: "k2", type: "shared" },
    ]);
    expect((tagged.body as { secrets: { tags: unknown[] }[] }).secrets[0]!.tags).toMatchObject([
      { slug: "backend", name: "backend" },
    ]);
    const untagged = await cliList(http, projectId, { tagSlugs: "frontend" });
    expect((untagged.body as Listed).secrets).toEqual([]);
  });

  it("secrets delete: the CLI's default type personal is 400 for an identity; --type shared deletes", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "GONE", "g");
    const body = { secretName: "GONE", workspaceId: projectId, environment: "dev", secretPath: "/" };
    const personal = await http.delete("/api/v3/secrets/raw/GONE", { ...body, type: "personal" });
    expect(personal).toMatchObject({ status: 400, body: { message: "Must be user to delete personal secret" } });
    const shared = await http.delete("/api/v3/secrets/raw/GONE", { ...body, type: "shared" });
    expect(shared.status).toBe(200);
    const missing = await http.delete("/api/v3/secrets/raw/GONE", { ...body, type: "shared" });
    expect(missing).toMatchObject({ status: 404, body: { message: "Secret not found" } });
  });

  it("looks a project up by id on the legacy workspace path", async () => {
    const { http, projectId } = await createSecretsScope();
    const res = await http.get(`/api/v1/workspace/${projectId}`);
    expect(res.body.workspace).toMatchObject({ id: projectId, environments: expect.any(Array) as unknown });
  });
});
