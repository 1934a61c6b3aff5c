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

const MISSING = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";

const put = async (client: KeywardClient, projectId: string, at: string, key: string, value: string, env = "dev") =>
  expectWritten(
    await client.secretsV4.create({
      params: { secretName: key },
      body: { projectId, environment: env, secretPath: at, secretValue: value },
    }),
  ).secret;

const valueOf = async (scope: SecretsScope, env: string, path: string, key: string) => {
  const res = await scope.tenant.admin.secretsV4.get({
    params: { secretName: key },
    query: { projectId: scope.projectId, environment: env, secretPath: path },
  });
  return res.status === 200 ? res.body.secret.secretValue : res.status;
};

const moveBody = (scope: SecretsScope, secretIds: string[], extra: Record<string, unknown> = {}) => ({
  projectId: scope.projectId,
  sourceEnvironment: "dev",
  sourceSecretPath: "/",
  destinationEnvironment: "staging",
  destinationSecretPath: "/app",
  secretIds,
  ...extra,
});

describe("POST /api/v4/secrets/move", () => {
  it("moves secrets to another environment's folder in one step, recording versions on both sides", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    await createFolder(tenant, projectId, "staging", "/", "app");
    const a = await put(tenant.admin, projectId, "/", "A", "alpha");
    const b = await put(tenant.admin, projectId, "/", "B", "beta");
    await put(tenant.admin, projectId, "/", "STAYS", "here");
    const res = await tenant.admin.secretsMove.move({ body: moveBody(scope, [a.id, b.id]) });
    expect(res).toMatchObject({ status: 200, body: { isSourceUpdated: true, isDestinationUpdated: true } });
    expect(await valueOf(scope, "dev", "/", "A")).toBe(404);
    expect(await valueOf(scope, "dev", "/", "STAYS")).toBe("here");
    expect(await valueOf(scope, "staging", "/app", "A")).toBe("alpha");
    expect(await valueOf(scope, "staging", "/app", "B")).toBe("beta");
    const versions = await tenant.app.deps.db
      .selectFrom("secret_versions")
      .select(["secret_id", "version", "is_deleted"])
      .where("secret_id", "=", a.id)
      .orderBy("version")
      .execute();
    expect(versions.map((v) => [v.version, v.is_deleted])).toEqual([
      [1, false],
      [2, true],
    ]);
  });

  it("refuses a different value in the destination unless asked to overwrite, then overwrites it", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    await createFolder(tenant, projectId, "staging", "/", "app");
    const a = await put(tenant.admin, projectId, "/", "A", "new");
    const b = await put(tenant.admin, projectId, "/", "B", "b");
    await put(tenant.admin, projectId, "/app", "A", "old", "staging");
    const refused = await tenant.admin.secretsMove.move({ body: moveBody(scope, [a.id, b.id]) });
    expect(refused).toMatchObject({
      status: 400,
      body: { message: "Failed to move secrets. The following secrets already exist in the destination: A" },
    });
    expect(await valueOf(scope, "dev", "/", "B")).toBe("b");
    expect(await valueOf(scope, "staging", "/app", "B")).toBe(404);
    const moved = await tenant.admin.secretsMove.move({
      body: moveBody(scope, [a.id, b.id], { shouldOverwrite: true }),
    });
    expect(moved.status).toBe(200);
    const got = expectOk(
      await tenant.admin.secretsV4.get({
        params: { secretName: "A" },
        query: { projectId, environment: "staging", secretPath: "/app" },
      }),
    );
    expect(got.secret).toMatchObject({ secretValue: "new", version: 2 });
    expect(await valueOf(scope, "dev", "/", "A")).toBe(404);
  });

  it("answers 400 when every selected secret already sits in the destination with its value", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    const a = await put(tenant.admin, projectId, "/", "A", "same");
    await put(tenant.admin, projectId, "/", "A", "same", "prod");
    const res = await tenant.admin.secretsMove.move({
      body: moveBody(scope, [a.id], { destinationEnvironment: "prod", destinationSecretPath: "/" }),
    });
    expect(res).toMatchObject({ status: 400, body: { message: "Selected secrets already exist in the destination." } });
    const sameFolder = await tenant.admin.secretsMove.move({
      body: moveBody(scope, [a.id], { destinationEnvironment: "dev", destinationSecretPath: "/" }),
    });
    expect(sameFolder.status).toBe(400);
    expect(await valueOf(scope, "dev", "/", "A")).toBe("same");
  });

  it("answers 400 for unknown ids or secrets outside the source folder, 404 for missing folders, 422 for bad input", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    await createFolder(tenant, projectId, "staging", "/", "app");
    const a = await put(tenant.admin, projectId, "/", "A", "a");
    const elsewhere = await put(tenant.admin, projectId, "/", "B", "b", "prod");
    const move = tenant.admin.secretsMove.move;
    for (const ids of [[a.id, MISSING], ["not-a-uuid"], [elsewhere.id]])
      expect(await move({ body: moveBody(scope, ids) })).toMatchObject({
        status: 400,
        body: { message: "Invalid secrets" },
      });
    expect(await move({ body: moveBody(scope, [a.id], { sourceSecretPath: "/nope" }) })).toMatchObject({
      status: 404,
      body: { message: "Source folder with path '/nope' in environment with slug 'dev' not found" },
    });
    expect(await move({ body: moveBody(scope, [a.id], { destinationEnvironment: "qa" }) })).toMatchObject({
      status: 404,
      body: { message: "Destination folder with path '/app' in environment with slug 'qa' not found" },
    });
    expect((await move({ body: moveBody(scope, []) })).status).toBe(422);
    expect(await valueOf(scope, "dev", "/", "A")).toBe("a");
  });

  it("needs delete and read on the source and create and edit on the destination (403, nothing written)", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    await createFolder(tenant, projectId, "staging", "/", "app");
    const a = await put(tenant.admin, projectId, "/", "A", "a");
    const all = ["describeSecret", "readValue", "create", "edit", "delete"] as const;
    const noDestination = await identityWithRules(scope, [
      { subject: "secrets", action: [...all], inverted: false, conditions: { environment: "dev" } },
      {
        subject: "secrets",
        action: ["describeSecret", "edit"],
        inverted: false,
        conditions: { environment: "staging" },
      },
    ]);
    const refused = await noDestination.client.secretsMove.move({ body: moveBody(scope, [a.id]) });
    expect(refused).toMatchObject({ status: 403, body: { message: "You are not allowed to create on secrets" } });
    const noDelete = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret", "readValue", "create", "edit"], inverted: false },
    ]);
    const refusedToo = await noDelete.client.secretsMove.move({ body: moveBody(scope, [a.id]) });
    expect(refusedToo).toMatchObject({ status: 403, body: { message: "You are not allowed to delete on secrets" } });
    expect(await valueOf(scope, "dev", "/", "A")).toBe("a");
    expect(await valueOf(scope, "staging", "/app", "A")).toBe(404);
    const allowed = await identityWithRules(scope, [{ subject: "secrets", action: [...all], inverted: false }]);
    expect((await allowed.client.secretsMove.move({ body: moveBody(scope, [a.id]) })).status).toBe(200);
  });

  it("hides another tenant's project behind 404", async () => {
    const scope = await createSecretsScope();
    const a = await put(scope.tenant.admin, scope.projectId, "/", "A", "a");
    const other = await createTenant();
    const res = await other.admin.secretsMove.move({ body: moveBody(scope, [a.id]) });
    expect(res.status).toBe(404);
    expect(await valueOf(scope, "dev", "/", "A")).toBe("a");
  });

  it("points references to a moved secret at its new place", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    await createFolder(tenant, projectId, "staging", "/", "app");
    await createFolder(tenant, projectId, "dev", "/", "svc");
    const a = await put(tenant.admin, projectId, "/", "A", "a");
    await put(tenant.admin, projectId, "/", "LOCAL", "x-${A}");
    await put(tenant.admin, projectId, "/", "NESTED", "${dev.A}", "prod");
    await put(tenant.admin, projectId, "/svc", "A", "svc-a");
    await put(tenant.admin, projectId, "/svc", "OTHER", "${A}");
    expect((await tenant.admin.secretsMove.move({ body: moveBody(scope, [a.id]) })).status).toBe(200);
    expect(await valueOf(scope, "dev", "/", "LOCAL")).toBe("x-${staging.app.A}");
    expect(await valueOf(scope, "prod", "/", "NESTED")).toBe("${staging.app.A}");
    expect(await valueOf(scope, "dev", "/svc", "OTHER")).toBe("${A}");
  });
});
