import { describe, expect, it } from "vitest";
import type { KeywardClient } from "@keyward/client";
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

const read = async (scope: SecretsScope, env: string, path: string, key: string) =>
  expectOk(
    await scope.tenant.admin.secretsV4.get({
      params: { secretName: key },
      query: { projectId: scope.projectId, environment: env, secretPath: path },
    }),
  ).secret;

/** dev:/A with a local, a nested and an unrelated same-named reference to it. */
const referencedScope = async () => {
  const scope = await createSecretsScope();
  const { tenant, projectId } = scope;
  await createFolder(tenant, projectId, "dev", "/", "svc");
  await put(tenant.admin, projectId, "dev", "/", "A", "a");
  await put(tenant.admin, projectId, "dev", "/", "LOCAL", "${A}/${A}");
  await put(tenant.admin, projectId, "prod", "/", "NESTED", "x ${dev.A} y");
  await put(tenant.admin, projectId, "dev", "/svc", "A", "svc-a");
  await put(tenant.admin, projectId, "dev", "/svc", "SAME_NAME", "${A}");
  return scope;
};

describe("renaming a secret rewrites the references to it", () => {
  it("rewrites local and nested references in the project, each as a new version, and nothing else", async () => {
    const scope = await referencedScope();
    const renamed = await scope.tenant.admin.secretsV4.update({
      params: { secretName: "A" },
      body: { projectId: scope.projectId, environment: "dev", newSecretName: "A2" },
    });
    expect(renamed.status).toBe(200);
    expect(await read(scope, "dev", "/", "LOCAL")).toMatchObject({ secretValue: "${A2}/${A2}", version: 2 });
    expect(await read(scope, "prod", "/", "NESTED")).toMatchObject({ secretValue: "x ${dev.A2} y", version: 2 });
    expect(await read(scope, "dev", "/svc", "SAME_NAME")).toMatchObject({ secretValue: "${A}", version: 1 });
    const expanded = expectOk(
      await scope.tenant.admin.secretsV4.get({
        params: { secretName: "NESTED" },
        query: { projectId: scope.projectId, environment: "prod", expandSecretReferences: "true" },
      }),
    );
    expect(expanded.secret.secretValue).toBe("x a y");
  });

  it("leaves references in secrets the caller may not edit as they are", async () => {
    const scope = await referencedScope();
    const devEditor = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue", "edit"],
        inverted: false,
        conditions: { environment: "dev" },
      },
    ]);
    const renamed = await devEditor.client.secretsV4.update({
      params: { secretName: "A" },
      body: { projectId: scope.projectId, environment: "dev", newSecretName: "A2" },
    });
    expect(renamed.status).toBe(200);
    expect((await read(scope, "dev", "/", "LOCAL")).secretValue).toBe("${A2}/${A2}");
    expect(await read(scope, "prod", "/", "NESTED")).toMatchObject({ secretValue: "x ${dev.A} y", version: 1 });
  });

  it("rewrites references on batch renames too", async () => {
    const scope = await referencedScope();
    const res = await scope.tenant.admin.secretsV4.batchUpdate({
      body: { projectId: scope.projectId, environment: "dev", secrets: [{ secretKey: "A", newSecretName: "A3" }] },
    });
    expect(res.status).toBe(200);
    expect((await read(scope, "dev", "/", "LOCAL")).secretValue).toBe("${A3}/${A3}");
    expect((await read(scope, "prod", "/", "NESTED")).secretValue).toBe("x ${dev.A3} y");
  });
});
