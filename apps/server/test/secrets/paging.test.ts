import { beforeAll, describe, expect, it } from "vitest";
import { addImport, createFolder, createSecretsScope, expectOk, identityWithRules, type SecretsScope } from "./helpers";
import { createTenant } from "../helpers/tenant";

/** Paging of the v4 list (offset and limit), through the typed client. */
describe("v4 secret list paging", () => {
  let scope: SecretsScope;
  const keys = Array.from({ length: 25 }, (_, i) => `K_${String(24 - i).padStart(2, "0")}`);
  const query = () => ({
    projectId: scope.projectId,
    environment: "dev",
    secretPath: "/app",
    includeImports: "true" as const,
    expandSecretReferences: "true" as const,
  });

  beforeAll(async () => {
    scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    await createFolder(tenant, projectId, "dev", "/", "app");
    await createFolder(tenant, projectId, "dev", "/", "shared");
    const where = { projectId, environment: "dev" };
    expectOk(
      await tenant.admin.secretsV4.batchCreate({
        body: { ...where, secretPath: "/shared", secrets: [{ secretKey: "BASE", secretValue: "b" }] },
      }),
    );
    // Written out of key order, one referencing another and one the import: pages follow the key order.
    expectOk(
      await tenant.admin.secretsV4.batchCreate({
        body: {
          ...where,
          secretPath: "/app",
          secrets: keys.map((secretKey, i) => ({
            secretKey,
            secretValue: i === 3 ? "${K_00}-${dev.shared.BASE}" : `v-${secretKey}`,
          })),
        },
      }),
    );
    await addImport(tenant, projectId, "/app", { environment: "dev", path: "/shared" });
  });

  it("answers pages that concatenate to the unpaged list, imports on the first page, with the total", async () => {
    const { admin } = scope.tenant;
    const unpaged = expectOk(await admin.secretsV4.list({ query: query() }));
    expect(Object.keys(unpaged)).toEqual(["secrets", "imports"]);
    expect(unpaged.secrets.map((s) => s.secretKey)).toEqual([...keys].sort());
    const pages = [];
    for (let offset = 0; offset < 30; offset += 10)
      pages.push(expectOk(await admin.secretsV4.list({ query: { ...query(), offset, limit: 10 } })));
    expect(pages.map((p) => p.secrets.length)).toEqual([10, 10, 5]);
    expect(pages.flatMap((p) => p.secrets)).toEqual(unpaged.secrets);
    expect(pages[0]!.imports).toEqual(unpaged.imports);
    expect(pages[1]!.imports).toEqual([]);
    expect(pages.map((p) => p.totalCount)).toEqual([25, 25, 25]);
    const past = expectOk(await admin.secretsV4.list({ query: { ...query(), offset: 100, limit: 10 } }));
    expect(past).toEqual({ secrets: [], imports: [], totalCount: 25 });
  });

  it("refuses a bad offset or limit", async () => {
    const { admin } = scope.tenant;
    for (const bad of [{ limit: 0 }, { limit: 1001 }, { offset: -1, limit: 5 }, { limit: "ten" as unknown as number }])
      expect((await admin.secretsV4.list({ query: { ...query(), ...bad } })).status).toBe(422);
    const alone = await admin.secretsV4.list({ query: { ...query(), offset: 10 } });
    expect(alone).toMatchObject({ status: 400, body: { message: "offset needs limit" } });
  });

  it("pages only what the caller may see, and refuses a caller without the right", async () => {
    const reader = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        inverted: false,
        conditions: { secretName: { $glob: "K_1*" } },
      },
    ]);
    const seen = expectOk(
      await reader.client.secretsV4.list({ query: { ...query(), expandSecretReferences: "false", limit: 4 } }),
    );
    expect(seen.secrets.map((s) => s.secretKey)).toEqual(["K_10", "K_11", "K_12", "K_13"]);
    expect(seen.totalCount).toBe(10);
    const none = await identityWithRules(scope, [{ subject: "secrets", action: ["create"], inverted: false }]);
    expect((await none.client.secretsV4.list({ query: { ...query(), limit: 5 } })).status).toBe(403);
    const other = await createTenant(scope.tenant.app);
    const foreign = await other.admin.secretsV4.list({
      query: { ...query(), projectId: scope.projectId, limit: 5 },
    });
    expect(foreign.status).toBe(404);
  });

  it("writes a list longer than one batch in order, each reference expanded, with a stable ETag", async () => {
    const { tenant, projectId, http } = scope;
    await createFolder(tenant, projectId, "dev", "/", "big");
    // 600 secrets: each of the second half names one of the first (written well before it), and the
    // first names the last (not yet written).
    const n = 600;
    const key = (i: number) => `B_${String(i).padStart(3, "0")}`;
    const valueOf = (i: number) =>
      i === 0 ? `first-\${${key(n - 1)}}` : i >= n / 2 ? `\${${key(i - n / 2)}}!` : `v${i}`;
    expectOk(
      await tenant.admin.secretsV4.batchCreate({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/big",
          secrets: Array.from({ length: n }, (_, i) => ({ secretKey: key(i), secretValue: valueOf(i) })),
        },
      }),
    );
    const big = { projectId, environment: "dev", secretPath: "/big", expandSecretReferences: "true" as const };
    const { secrets } = expectOk(await tenant.admin.secretsV4.list({ query: big }));
    const plain = (i: number): string =>
      i === 0 ? `first-${plain(n - 1)}` : i >= n / 2 ? `${plain(i - n / 2)}!` : `v${i}`;
    expect(secrets.map((s) => [s.secretKey, s.secretValue])).toEqual(
      Array.from({ length: n }, (_, i) => [key(i), plain(i)]),
    );
    const first = await http.get("/api/v4/secrets", big);
    const etag = first.headers.get("etag")!;
    expect(first.body).toEqual({ secrets, imports: [] });
    expect((await http.get("/api/v4/secrets", big, { "if-none-match": etag })).status).toBe(304);
  });
});
