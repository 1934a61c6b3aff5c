import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/context";
import { createSecretListsState } from "../../src/modules/secrets/secrets.state";
import { addImport, createFolder, createSecretsScope, expectOk, identityWithRules, type SecretsScope } from "./helpers";

/**
 * A large list (here: more than 5 rows) is streamed: written as its secrets are opened, with a tag
 * decided before the first byte from the rows as stored. Each test compares it with the same list
 * built whole (the large-row bound raised), so the two ways of answering cannot drift apart.
 */
describe("large secret lists are streamed", () => {
  let scope: SecretsScope;
  let deps: AppDeps;
  let saved: AppDeps["secretLists"];
  const streamed = () =>
    (deps.secretLists = createSecretListsState({ largeRows: 5, slots: 1, queueTimeoutMs: 20_000 }).secretLists);
  const whole = () =>
    (deps.secretLists = createSecretListsState({ largeRows: 1_000, slots: 1, queueTimeoutMs: 20_000 }).secretLists);
  const query = (extra: Record<string, string> = {}) => ({
    projectId: scope.projectId,
    environment: "dev",
    secretPath: "/big",
    includeImports: "true",
    expandSecretReferences: "true",
    ...extra,
  });
  const v4 = (extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    scope.http.get("/api/v4/secrets", query(extra), headers);
  const patch = async (key: string, body: Record<string, unknown>, secretPath = "/big") =>
    expect(
      (
        await scope.http.patch(`/api/v3/secrets/raw/${key}`, {
          workspaceId: scope.projectId,
          environment: "dev",
          secretPath,
          ...body,
        })
      ).status,
    ).toBe(200);

  beforeAll(async () => {
    scope = await createSecretsScope();
    deps = scope.tenant.app.deps;
    saved = deps.secretLists;
    const { tenant, projectId } = scope;
    for (const name of ["big", "shared"]) await createFolder(tenant, projectId, "dev", "/", name);
    const put = async (secretPath: string, secrets: { secretKey: string; secretValue: string }[]) =>
      expectOk(
        await tenant.admin.secretsV4.batchCreate({ body: { projectId, environment: "dev", secretPath, secrets } }),
      );
    await put("/shared", [
      { secretKey: "HOST", secretValue: "db.internal" },
      { secretKey: "PORT", secretValue: "5432" },
    ]);
    await put(
      "/big",
      Array.from({ length: 8 }, (_, i) => ({
        secretKey: `K_${i}`,
        // Some values name another secret here or in /shared: the list expands them.
        secretValue:
          i % 3 === 0 ? `\${dev.shared.HOST}:\${dev.shared.PORT}/${i}` : i % 3 === 1 ? `\${K_0}-${i}` : `v${i}`,
      })),
    );
    await addImport(tenant, projectId, "/big", { environment: "dev", path: "/shared" });
  });
  afterAll(() => {
    deps.secretLists = saved;
  });

  it("answers the same body as the list built whole, chunked, tagged, and 304 to its tag", async () => {
    const cases: Record<string, string>[] = [{}, { viewSecretValue: "false" }, { limit: "6", offset: "1" }];
    for (const extra of cases) {
      whole();
      const built = await v4(extra);
      expect(built.status).toBe(200);
      expect(built.headers.get("content-length")).not.toBeNull();
      const lists = streamed();
      const sent = await v4(extra);
      expect(sent.status).toBe(200);
      expect(sent.headers.get("content-length")).toBeNull();
      expect(sent.headers.get("transfer-encoding")).toBe("chunked");
      expect(sent.body).toEqual(built.body);
      const etag = sent.headers.get("etag")!;
      expect(etag).toMatch(/^"[\w-]{32}"$/);
      const again = await v4(extra, { "If-None-Match": etag });
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(lists.gate.running()).toBe(0);
    }
    const listed = expectOk(
      await scope.tenant.admin.secretsV4.list({
        query: {
          projectId: scope.projectId,
          environment: "dev",
          secretPath: "/big",
          includeImports: "true",
          expandSecretReferences: "true",
        },
      }),
    );
    expect(listed.secrets.map((s) => s.secretValue).slice(0, 3)).toEqual([
      "db.internal:5432/0",
      "db.internal:5432/0-1",
      "v2",
    ]);
    expect(listed.imports[0]!.secrets.map((s) => s.secretKey)).toEqual(["HOST", "PORT"]);

    // The operator's v3 list takes the same path.
    const v3Query = { workspaceId: scope.projectId, environment: "dev", secretPath: "/big", include_imports: "true" };
    whole();
    const v3Whole = await scope.http.get("/api/v3/secrets/raw", v3Query);
    streamed();
    const v3Streamed = await scope.http.get("/api/v3/secrets/raw", v3Query);
    expect(v3Streamed.headers.get("content-length")).toBeNull();
    expect(v3Streamed.body).toEqual(v3Whole.body);
  });

  it("changes its tag with every input of the body, and keeps it while nothing changes", async () => {
    streamed();
    const seen: string[] = [];
    const tagAfter = async (change: () => Promise<unknown>, extra: Record<string, string> = {}) => {
      await change();
      const res = await v4(extra);
      expect(res.status).toBe(200);
      const etag = res.headers.get("etag")!;
      expect(seen).not.toContain(etag);
      seen.push(etag);
      // Asked again with nothing changed: the same tag.
      expect((await v4(extra)).headers.get("etag")).toBe(etag);
    };
    const nothing = async () => undefined;
    await tagAfter(nothing);
    await tagAfter(nothing, { viewSecretValue: "false" });
    await tagAfter(nothing, { expandSecretReferences: "false" });
    await tagAfter(nothing, { limit: "7" });
    await tagAfter(() => patch("K_2", { secretValue: "changed" }));
    await tagAfter(() => patch("K_2", { secretComment: "a comment" }));
    await tagAfter(() => patch("K_2", { skipMultilineEncoding: true }));
    await tagAfter(() => patch("K_2", { secretMetadata: [{ key: "team", value: "core" }] }));
    const tag = expectOk(
      await scope.tenant.admin.secretTags.projects.create({
        params: { projectId: scope.projectId },
        body: { slug: "db", color: "red" },
      }),
    ).tag;
    await tagAfter(() => patch("K_2", { tagIds: [tag.id] }));
    // A tag recoloured touches no secret row, yet the body shows its color.
    await tagAfter(async () =>
      expectOk(
        await scope.tenant.admin.secretTags.projects.update({
          params: { projectId: scope.projectId, tagId: tag.id },
          body: { color: "blue" },
        }),
      ),
    );
    // A referenced secret elsewhere changes an expanded value of this list (and the import's body).
    await tagAfter(() => patch("PORT", { secretValue: "6432" }, "/shared"));
    await tagAfter(() => patch("K_5", { newSecretName: "K_5_RENAMED" }));
  });

  it("refuses an expansion the caller may not make with the list's 403, before any byte", async () => {
    const reader = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        inverted: false,
        conditions: { secretPath: "/big" },
      },
    ]);
    const lists = streamed();
    const refused = await reader.http.get("/api/v4/secrets", { ...query(), includeImports: "false" });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      statusCode: 403,
      message: "Failed to expand one or more secret references",
    });
    expect(lists.gate.running()).toBe(0);
    // Without expansion the same caller gets the list, streamed.
    const plain = await reader.http.get("/api/v4/secrets", {
      ...query(),
      includeImports: "false",
      expandSecretReferences: "false",
    });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-length")).toBeNull();
    expect(plain.body.secrets).toHaveLength(8);
  });

  it("expands a value rewritten to name a reference, though the value it replaced was found to hold none", async () => {
    const lists = streamed();
    expectOk(
      await scope.tenant.admin.secretsV4.batchCreate({
        body: {
          projectId: scope.projectId,
          environment: "dev",
          secretPath: "/big",
          secrets: [{ secretKey: "LATER", secretValue: "plain for now" }],
        },
      }),
    );
    const valueOf = async () => {
      const res = await v4();
      expect(res.status).toBe(200);
      const secrets = (res.body as { secrets: { secretKey: string; secretValue: string }[] }).secrets;
      return secrets.find((s) => s.secretKey === "LATER")?.secretValue;
    };
    expect(await valueOf()).toBe("plain for now");
    const remembered = lists.referenceFree.size();
    expect(remembered).toBeGreaterThan(0);
    // Asked again, the values already looked at are not looked at again.
    expect(await valueOf()).toBe("plain for now");
    expect(lists.referenceFree.size()).toBe(remembered);
    await patch("LATER", { secretValue: "${dev.shared.HOST}" });
    expect(await valueOf()).toBe("db.internal");
  });
});
