import { describe, expect, it } from "vitest";
import type { KeywardClient } from "@keyward/client";
import { denseLayers, referenceLine, repeatedChain } from "../helpers/reference-graphs";
import { createSecretsScope, expectOk, identityWithRules, type SecretsScope } from "./helpers";

/** Writes secrets into dev:/ in one batch (references between them count as existing). */
const writeAll = async (
  scope: SecretsScope,
  secrets: Record<string, string>,
  client: KeywardClient = scope.tenant.admin,
) =>
  expectOk(
    await client.secretsV4.batchCreate({
      body: {
        projectId: scope.projectId,
        environment: "dev",
        secretPath: "/",
        secrets: Object.entries(secrets).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      },
    }),
  );

const getQuery = (scope: SecretsScope) => ({
  projectId: scope.projectId,
  environment: "dev",
  secretPath: "/",
  expandSecretReferences: "true" as const,
});

const countNodes = (node: { children: unknown[] }): number =>
  1 + node.children.reduce<number>((sum, child) => sum + countNodes(child as { children: unknown[] }), 0);

describe("reference expansion costs work in the distinct references, not in the paths through them", () => {
  it("expands a chain of repeated references once per secret and gives the full value", async () => {
    const scope = await createSecretsScope();
    await writeAll(scope, repeatedChain(3));
    const res = await scope.http.get("/api/v4/secrets/L0", getQuery(scope));
    expect(res.status).toBe(200);
    expect(res.body.secret.secretValue).toBe("v".repeat(3 ** 10));
    const v3 = await scope.http.get("/api/v3/secrets/raw/L0", {
      workspaceId: scope.projectId,
      environment: "dev",
      expandSecretReferences: "true",
    });
    expect(v3.body.secret.secretValue).toBe("v".repeat(3 ** 10));
  });

  it("answers 422 when an expansion would exceed the secret value limit (get, v3, list and an importing folder)", async () => {
    const scope = await createSecretsScope();
    await writeAll(scope, repeatedChain(5));
    const started = Date.now();
    const get = await scope.http.get("/api/v4/secrets/L0", getQuery(scope));
    expect(get.status).toBe(422);
    expect(get.body).toMatchObject({ statusCode: 422, error: "UnprocessableEntity" });
    expect(get.body.message).toContain("secret value limit");
    const v3 = await scope.http.get("/api/v3/secrets/raw/L0", {
      workspaceId: scope.projectId,
      environment: "dev",
      expandSecretReferences: "true",
    });
    expect(v3.status).toBe(422);
    const list = await scope.tenant.admin.secretsV4.list({
      query: { projectId: scope.projectId, environment: "dev", secretPath: "/", expandSecretReferences: "true" },
    });
    expect(list.status).toBe(422);
    expectOk(
      await scope.tenant.admin.secretImports.create({
        body: {
          workspaceId: scope.projectId,
          environment: "staging",
          path: "/",
          import: { environment: "dev", path: "/" },
        },
      }),
    );
    const imported = await scope.tenant.admin.secretsV4.list({
      query: {
        projectId: scope.projectId,
        environment: "staging",
        secretPath: "/",
        expandSecretReferences: "true",
        includeImports: "true",
      },
    });
    expect(imported.status).toBe(422);
    // Without expansion the same secrets list as stored.
    const plain = expectOk(
      await scope.tenant.admin.secretsV4.list({
        query: { projectId: scope.projectId, environment: "dev", secretPath: "/" },
      }),
    );
    expect(plain.secrets.find((s) => s.secretKey === "L9")?.secretValue).toBe("${L10}".repeat(5));
    // Four refused expansions of a 5^10 graph; each visits eleven secrets.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await scope.http.get("/api/status", {})).status).toBe(200);
  });

  it("lists 1,000 secrets each referencing the next with the depth-bounded values", async () => {
    const scope = await createSecretsScope();
    const n = 1000;
    await writeAll(scope, referenceLine(n));
    const list = expectOk(
      await scope.tenant.admin.secretsV4.list({
        query: { projectId: scope.projectId, environment: "dev", secretPath: "/", expandSecretReferences: "true" },
      }),
    );
    const values = new Map(list.secrets.map((s) => [s.secretKey, s.secretValue]));
    expect(values.size).toBe(n);
    for (let i = 0; i < n; i += 1)
      // Ten references deep at most: the eleventh stays literal.
      expect(values.get(`C${i}`)).toBe(n - 1 - i <= 10 ? "end" : `\${C${i + 11}}`);
  });

  it("still names the unreadable reference and the secret expanded, for every secret that reaches it", async () => {
    const scope = await createSecretsScope();
    expectOk(
      await scope.tenant.admin.secretsV4.create({
        params: { secretName: "HIDDEN" },
        body: { projectId: scope.projectId, environment: "staging", secretPath: "/", secretValue: "h" },
      }),
    );
    await writeAll(scope, { MID: "${staging.HIDDEN}", A: "${MID}", B: "${MID}${MID}" });
    const reader = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret", "readValue"], inverted: false },
      { subject: "secrets", action: ["readValue"], inverted: true, conditions: { environment: "staging" } },
    ]);
    const list = await reader.client.secretsV4.list({
      query: { projectId: scope.projectId, environment: "dev", secretPath: "/", expandSecretReferences: "true" },
    });
    expect(list.status).toBe(403);
    const details = JSON.stringify((list.body as { details?: unknown }).details);
    for (const root of ["A", "B", "MID"])
      expect(details).toContain(`which is referenced by secret '${root}' in environment 'dev' at path '/'`);
  });
});

describe("reference trees show each secret once", () => {
  it("reference tree: later occurrences are leaves, and the node count stays linear", async () => {
    const scope = await createSecretsScope();
    await writeAll(scope, repeatedChain(3));
    const res = expectOk(
      await scope.tenant.admin.secretReferences.referenceTree({
        params: { secretName: "L0" },
        query: { projectId: scope.projectId, environment: "dev", secretPath: "/" },
      }),
    );
    // Each Li: one node with its three children, the first expanded and two as leaves.
    expect(countNodes(res.tree)).toBe(1 + 3 * 10);
    expect(res.tree.children.map((c) => [c.key, c.children.length])).toEqual([
      ["L1", 3],
      ["L1", 0],
      ["L1", 0],
    ]);
    expect(res.tree.children[1]).toMatchObject({ key: "L1", value: "${L2}${L2}${L2}" });
    expect(res.value).toBe("v".repeat(3 ** 10));
  });

  it("dependency tree of the bottom of ten dense layers holds each referrer once", async () => {
    const scope = await createSecretsScope();
    await writeAll(scope, denseLayers(4));
    const res = expectOk(
      await scope.tenant.admin.secretReferences.dependencyTree({
        params: { secretName: "BOTTOM" },
        query: { projectId: scope.projectId, environment: "dev", secretPath: "/" },
      }),
    );
    // 40 secrets reference something; each appears once with children, and as a leaf from each other referrer of its layer's targets.
    const nodes = countNodes(res.tree);
    expect(nodes).toBeLessThanOrEqual(1 + 4 + 9 * 4 * 4);
    const expandedKeys = new Set<string>();
    const walk = (node: { key: string; children: { key: string; children: unknown[] }[] }) => {
      if (node.children.length > 0) {
        expect(expandedKeys.has(node.key)).toBe(false);
        expandedKeys.add(node.key);
      }
      for (const child of node.children) walk(child as never);
    };
    walk(res.tree);
    expect(expandedKeys.size).toBe(1 + 4 * 9);
  });

  it("answers 422 past the node bound", async () => {
    const scope = await createSecretsScope();
    // 120 secrets each referencing all 100 targets: 12,000 edges below ROOT.
    const targets = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`T${i}`, "t"]));
    const all = Array.from({ length: 100 }, (_, i) => `\${T${i}}`).join("");
    const middles = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`M${i}`, all]));
    const root = Array.from({ length: 120 }, (_, i) => `\${M${i}}`).join("");
    await writeAll(scope, { ...targets, ...middles, ROOT: root });
    const query = { projectId: scope.projectId, environment: "dev", secretPath: "/" };
    const tree = await scope.tenant.admin.secretReferences.referenceTree({ params: { secretName: "ROOT" }, query });
    expect(tree).toMatchObject({ status: 422, body: { error: "UnprocessableEntity" } });
    const deps = await scope.tenant.admin.secretReferences.dependencyTree({ params: { secretName: "T0" }, query });
    expect(deps.status).toBe(200);
  });
});
