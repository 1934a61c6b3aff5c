import { describe, expect, it } from "vitest";
import type { KeywardClient } from "@keyward/client";
import { createTenant } from "../helpers/tenant";
import {
  createFolder,
  createSecretsScope,
  expectOk,
  expectWritten,
  identityWithRules,
  type SecretsScope,
} from "./helpers";

const put = async (client: KeywardClient, projectId: string, env: string, path: string, key: string, value: string) =>
  expectWritten(
    await client.secretsV4.create({
      params: { secretName: key },
      body: { projectId, environment: env, secretPath: path, secretValue: value },
    }),
  ).secret;

/** dev:/A = "${B}:${staging.app.C}", dev:/B = "b", staging:/app/C = "c", prod:/P = "${dev.B}", dev:/Z = "${A}". */
const graph = async () => {
  const scope = await createSecretsScope();
  const { tenant, projectId } = scope;
  await createFolder(tenant, projectId, "staging", "/", "app");
  await put(tenant.admin, projectId, "dev", "/", "B", "b");
  await put(tenant.admin, projectId, "staging", "/app", "C", "c");
  await put(tenant.admin, projectId, "dev", "/", "A", "${B}:${staging.app.C}");
  await put(tenant.admin, projectId, "prod", "/", "P", "${dev.B}");
  await put(tenant.admin, projectId, "dev", "/", "Z", "${A}");
  return scope;
};

const q = (scope: SecretsScope, environment = "dev", secretPath = "/") => ({
  projectId: scope.projectId,
  environment,
  secretPath,
});

describe("GET /api/v4/secrets/:name/secret-reference-tree", () => {
  it("answers the referenced secrets with their values, recursively, and the expanded value", async () => {
    const scope = await graph();
    const res = expectOk(
      await scope.tenant.admin.secretReferences.referenceTree({ params: { secretName: "Z" }, query: q(scope) }),
    );
    expect(res.value).toBe("b:c");
    expect(res.tree).toEqual({
      key: "Z",
      environment: "dev",
      secretPath: "/",
      value: "${A}",
      children: [
        {
          key: "A",
          environment: "dev",
          secretPath: "/",
          value: "${B}:${staging.app.C}",
          children: [
            { key: "B", environment: "dev", secretPath: "/", value: "b", children: [] },
            { key: "C", environment: "staging", secretPath: "/app", value: "c", children: [] },
          ],
        },
      ],
    });
  });

  it("stops at a cycle and shows a deleted reference without a value", async () => {
    const scope = await graph();
    const { tenant, projectId } = scope;
    expectOk(
      await tenant.admin.secretsV4.update({
        params: { secretName: "B" },
        body: { projectId, environment: "dev", secretValue: "${Z}" },
      }),
    );
    const cyclic = expectOk(
      await tenant.admin.secretReferences.referenceTree({ params: { secretName: "B" }, query: q(scope) }),
    );
    const a = cyclic.tree.children[0]!.children[0]!;
    expect(a.key).toBe("A");
    expect(a.children.map((c) => [c.key, c.children.length])).toEqual([
      ["B", 0],
      ["C", 0],
    ]);
    expectOk(
      await tenant.admin.secretsV4.delete({
        params: { secretName: "C" },
        body: { projectId, environment: "staging", secretPath: "/app" },
      }),
    );
    const gone = expectOk(
      await tenant.admin.secretReferences.referenceTree({ params: { secretName: "A" }, query: q(scope) }),
    );
    expect(gone.tree.children[1]).toEqual({ key: "C", environment: "staging", secretPath: "/app", children: [] });
    expect(gone.value).toMatch(/:\$\{staging\.app\.C\}$/);
  });

  it("needs read-value on the secret and on every secret it references", async () => {
    const scope = await graph();
    const describer = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    expect(
      await describer.client.secretReferences.referenceTree({ params: { secretName: "A" }, query: q(scope) }),
    ).toMatchObject({
      status: 403,
      body: {
        message:
          "Unable to get secret reference tree for secret with key 'A', because you don't have permission to view secret value.",
      },
    });
    const devReader = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        inverted: false,
        conditions: { environment: "dev" },
      },
    ]);
    expect(
      await devReader.client.secretReferences.referenceTree({ params: { secretName: "A" }, query: q(scope) }),
    ).toMatchObject({
      status: 403,
      body: {
        message:
          "You do not have permission to read secret 'C' in environment 'staging' at path '/app', which is referenced by secret 'A' in environment 'dev' at path '/'.",
      },
    });
    expect(
      (await devReader.client.secretReferences.referenceTree({ params: { secretName: "B" }, query: q(scope) })).status,
    ).toBe(200);
  });

  it("answers 404 for a missing secret, folder or another tenant's project, 422 without an environment", async () => {
    const scope = await graph();
    const tree = scope.tenant.admin.secretReferences.referenceTree;
    expect(await tree({ params: { secretName: "NOPE" }, query: q(scope) })).toMatchObject({
      status: 404,
      body: { message: "Secret with name 'NOPE' not found" },
    });
    expect(await tree({ params: { secretName: "A" }, query: q(scope, "dev", "/nope") })).toMatchObject({
      status: 404,
      body: { message: "Folder with path '/nope' in environment with slug 'dev' not found" },
    });
    const other = (await createTenant()).admin.secretReferences;
    expect((await other.referenceTree({ params: { secretName: "A" }, query: q(scope) })).status).toBe(404);
    expect((await other.dependencyTree({ params: { secretName: "A" }, query: q(scope) })).status).toBe(404);
    const res = await scope.http.get("/api/v4/secrets/A/secret-reference-tree", { projectId: scope.projectId });
    expect(res.status).toBe(422);
  });
});

describe("GET /api/v4/secrets/:name/reference-dependency-tree", () => {
  it("answers the secrets that reference this one, recursively", async () => {
    const scope = await graph();
    const res = expectOk(
      await scope.tenant.admin.secretReferences.dependencyTree({ params: { secretName: "B" }, query: q(scope) }),
    );
    expect(res.tree).toEqual({
      key: "B",
      environment: "dev",
      secretPath: "/",
      children: [
        {
          key: "A",
          environment: "dev",
          secretPath: "/",
          children: [{ key: "Z", environment: "dev", secretPath: "/", children: [] }],
        },
        { key: "P", environment: "prod", secretPath: "/", children: [] },
      ],
    });
  });

  it("leaves out secrets the caller may not describe and needs describe on the secret itself", async () => {
    const scope = await graph();
    const devOnly = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret"], inverted: false, conditions: { environment: "dev" } },
    ]);
    const res = expectOk(
      await devOnly.client.secretReferences.dependencyTree({ params: { secretName: "B" }, query: q(scope) }),
    );
    expect(res.tree.children.map((c) => c.key)).toEqual(["A"]);
    const prodOnly = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret"], inverted: false, conditions: { environment: "prod" } },
    ]);
    expect(
      (await prodOnly.client.secretReferences.dependencyTree({ params: { secretName: "B" }, query: q(scope) })).status,
    ).toBe(403);
  });
});
