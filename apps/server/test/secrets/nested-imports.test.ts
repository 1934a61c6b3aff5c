import { describe, expect, it } from "vitest";
import { resolveImports } from "../../src/modules/secrets/imports/resolve-imports";
import { createFolder } from "../helpers/structure";
import { expectOk } from "../helpers/tenant";
import { addImport, createSecretsScope, putSecret, type SecretsScope } from "./helpers";

type Listed = { imports: { secretPath: string; secrets: { secretKey: string; secretValue: string }[] }[] };

/** A folder /name of dev holding one secret named after it; returns the folder's id. */
const folderWithSecret = async (scope: SecretsScope, name: string) => {
  const folder = await createFolder(scope.tenant, scope.projectId, "dev", "/", name);
  await putSecret(scope.http, scope.projectId, name.toUpperCase(), `from ${name}`, { secretPath: `/${name}` });
  return folder.id;
};

const importsOf = async (scope: SecretsScope, path: string) => {
  const query = { projectId: scope.projectId, environment: "dev", secretPath: path, includeImports: "true" };
  const list = await scope.http.get("/api/v4/secrets", query);
  expect(list.status).toBe(200);
  return (list.body as Listed).imports.map((group) => ({
    path: group.secretPath,
    keys: group.secrets.map((s) => s.secretKey),
  }));
};

/** What one import brings when its source imports others in turn. */
describe("imports of imports on read", () => {
  it("folds nested imports into the group that led to them, breadth-first, each folder once per group", async () => {
    const scope = await createSecretsScope();
    const appId = await folderWithSecret(scope, "app");
    for (const name of ["a", "b", "c", "d"]) await folderWithSecret(scope, name);
    const { tenant, projectId } = scope;
    // app → a, b; a → b, c; b → d; c → d (a diamond under a).
    await addImport(tenant, projectId, "/app", { environment: "dev", path: "/a" });
    await addImport(tenant, projectId, "/app", { environment: "dev", path: "/b" });
    await addImport(tenant, projectId, "/a", { environment: "dev", path: "/b" });
    await addImport(tenant, projectId, "/a", { environment: "dev", path: "/c" });
    await addImport(tenant, projectId, "/b", { environment: "dev", path: "/d" });
    await addImport(tenant, projectId, "/c", { environment: "dev", path: "/d" });

    expect(await importsOf(scope, "/app")).toEqual([
      { path: "/a", keys: ["A", "B", "C", "D"] },
      { path: "/b", keys: ["B", "D"] },
    ]);
    // A secret get reads through the same imports: D reaches /app through /a → /b → /d.
    const got = await scope.http.get("/api/v4/secrets/D", {
      projectId,
      environment: "dev",
      secretPath: "/app",
      include_imports: "true",
    });
    expect(got).toMatchObject({ status: 200, body: { secret: { secretKey: "D", secretValue: "from d" } } });

    // Two statements for the three levels: the import graph, then the rows of the folders it reaches.
    let statements = 0;
    const counted = tenant.app.deps.db.withPlugin({
      transformQuery: ({ node }) => {
        statements += 1;
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    const groups = await resolveImports(counted, [appId]);
    expect(groups.map((g) => g.secrets.map((s) => s.row.key))).toEqual([
      ["A", "B", "C", "D"],
      ["B", "D"],
    ]);
    expect(statements).toBe(2);
  });

  it("follows ten levels and no more, and skips a source folder that no longer exists", async () => {
    const scope = await createSecretsScope();
    const chain = Array.from({ length: 12 }, (_, i) => `l${i}`);
    for (const name of ["top", ...chain, "gone"]) await folderWithSecret(scope, name);
    const { tenant, projectId } = scope;
    await addImport(tenant, projectId, "/top", { environment: "dev", path: "/l0" });
    for (let i = 0; i + 1 < chain.length; i += 1)
      await addImport(tenant, projectId, `/${chain[i]}`, { environment: "dev", path: `/${chain[i + 1]}` });
    await addImport(tenant, projectId, "/top", { environment: "dev", path: "/gone" });
    await addImport(tenant, projectId, "/l0", { environment: "dev", path: "/gone" });
    const gone = expectOk(
      await tenant.admin.folders.delete({
        params: { folderIdOrName: "gone" },
        body: { workspaceId: projectId, environment: "dev", path: "/" },
      }),
    );
    expect(gone.folder.name).toBe("gone");

    expect(await importsOf(scope, "/top")).toEqual([
      { path: "/l0", keys: chain.slice(0, 10).map((name) => name.toUpperCase()) },
      { path: "/gone", keys: [] },
    ]);
  });
});
