import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject } from "../helpers/tenant";
import { addImport, createSecretsScope, identityWithRules, putSecret, rawHttp, type SecretsScope } from "./helpers";

type Listed = { secrets: { secretKey: string; secretValue: string }[]; imports: Listed[] };
/** The keys (and values) of a raw list answer. */
const secretsOf = (body: unknown) => (body as Listed).secrets;

/** The list request of the Kubernetes operator (and the GitHub Action): slug, string booleans, imports and references. */
const operatorQuery = (slug: string, secretPath = "/") => ({
  workspaceSlug: slug,
  environment: "dev",
  secretPath,
  include_imports: "true",
  recursive: "false",
  expandSecretReferences: "true",
});

describe("GET /api/v3/secrets/raw: ETag and If-None-Match", () => {
  let scope: SecretsScope;
  let slug: string;
  beforeAll(async () => {
    scope = await createSecretsScope();
    slug = scope.project.slug;
    await putSecret(scope.http, scope.projectId, "DB_URL", "postgres://one");
    await putSecret(scope.http, scope.projectId, "API", "${DB_URL}/api");
  });

  it("tags the operator's list and answers 304 to a matching If-None-Match, as the v4 list does", async () => {
    const first = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug));
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(secretsOf(first.body).map((s) => [s.secretKey, s.secretValue])).toEqual([
      ["API", "postgres://one/api"],
      ["DB_URL", "postgres://one"],
    ]);

    for (const header of [etag!, `W/${etag}`, `"other", ${etag}`]) {
      const again = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug), { "If-None-Match": header });
      expect(again.status).toBe(304);
      expect(again.body).toBeUndefined();
      expect(again.headers.get("etag")).toBe(etag);
    }
    // By id as by slug: the same body, the same tag.
    const byId = await scope.http.get(
      "/api/v3/secrets/raw",
      { ...operatorQuery(slug), workspaceSlug: "", workspaceId: scope.projectId },
      { "If-None-Match": etag! },
    );
    expect(byId.status).toBe(304);
    // The typed client sees the 304 the contract declares.
    const typed = await scope.tenant.admin.secretsV3.list({
      query: {
        workspaceId: scope.projectId,
        environment: "dev",
        include_imports: "true",
        expandSecretReferences: "true",
      },
      extraHeaders: { "if-none-match": etag! },
    });
    expect(typed.status).toBe(304);
    const stale = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug), { "If-None-Match": '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.headers.get("etag")).toBe(etag);
  });

  it("answers 200 with a new ETag once the folder, or a folder it imports, changes", async () => {
    const tagOf = async () => (await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug))).headers.get("etag")!;
    const before = await tagOf();
    const patched = await scope.http.patch("/api/v3/secrets/raw/DB_URL", {
      workspaceId: scope.projectId,
      environment: "dev",
      secretValue: "postgres://two",
    });
    expect(patched.status).toBe(200);
    const changed = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug), { "If-None-Match": before });
    expect(changed.status).toBe(200);
    const after = changed.headers.get("etag")!;
    expect(after).not.toBe(before);
    expect(secretsOf(changed.body).find((s) => s.secretKey === "API")?.secretValue).toBe("postgres://two/api");

    // Imports are part of the view: a change in an imported folder changes the tag too.
    await addImport(scope.tenant, scope.projectId, "/", { environment: "staging", path: "/" });
    const withImport = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug), { "If-None-Match": after });
    expect(withImport.status).toBe(200);
    const importTag = withImport.headers.get("etag")!;
    await scope.http.post("/api/v3/secrets/raw/FROM_STAGING", {
      workspaceId: scope.projectId,
      environment: "staging",
      secretValue: "s",
    });
    const imported = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug), { "If-None-Match": importTag });
    expect(imported.status).toBe(200);
    expect(imported.headers.get("etag")).not.toBe(importTag);
    expect(secretsOf((imported.body as Listed).imports[0]).map((s) => s.secretKey)).toEqual(["FROM_STAGING"]);
    const unchanged = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug), {
      "If-None-Match": imported.headers.get("etag")!,
    });
    expect(unchanged.status).toBe(304);
  });

  it("tags each caller's own view, and checks permissions before any 304", async () => {
    const full = await scope.http.get("/api/v3/secrets/raw", operatorQuery(slug));
    const etag = full.headers.get("etag")!;
    // A caller who may see only DB_URL gets another body, so another tag: the admin's is no 304 for it.
    const narrow = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        conditions: { secretName: "DB_URL" },
        inverted: false,
      },
    ]);
    const theirs = await narrow.http.get(
      "/api/v3/secrets/raw",
      { ...operatorQuery(slug), expandSecretReferences: "false" },
      {
        "If-None-Match": etag,
      },
    );
    expect(theirs.status).toBe(200);
    expect(secretsOf(theirs.body).map((s) => s.secretKey)).toEqual(["DB_URL"]);
    expect(theirs.headers.get("etag")).not.toBe(etag);

    // A caller without access gets its refusal, whatever tag it sends.
    const outsider = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "no-access" });
    const refused = await rawHttp(scope.tenant.app.baseUrl, outsider.token).get(
      "/api/v3/secrets/raw",
      operatorQuery(slug),
      { "If-None-Match": etag },
    );
    expect(refused.status).toBe(403);
    // Another organization's project is not found.
    const other = await createProject((await createSecretsScope()).tenant);
    const foreign = await scope.http.get("/api/v3/secrets/raw", operatorQuery(other.slug), { "If-None-Match": etag });
    expect(foreign.status).toBe(404);
  });
});
