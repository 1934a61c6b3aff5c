import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/tenant";
import { createSecretsScope, expectOk, identityWithRules, putSecret, type SecretsScope } from "./helpers";

const RAW = "/api/v3/secrets/raw";
const MISSING = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";

/** A secret with three versions: v1 "one" (tag a, comment c1), v2 "two", v3 renamed to KEY2 with value "three". */
const threeVersions = async (scope: SecretsScope) => {
  const { tenant, projectId, http } = scope;
  const tag = expectOk(
    await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "a", color: "" } }),
  ).tag;
  const secret = await putSecret(http, projectId, "KEY", "one", {
    tagIds: [tag.id],
    secretComment: "c1",
    secretMetadata: [{ key: "owner", value: "ops" }],
  });
  const base = { workspaceId: projectId, environment: "dev" };
  expect((await http.patch(`${RAW}/KEY`, { ...base, secretValue: "two", tagIds: [] })).status).toBe(200);
  const renamed = await http.patch(`${RAW}/KEY`, { ...base, secretValue: "three", newSecretName: "KEY2" });
  expect(renamed.status).toBe(200);
  return { secretId: secret.id, tag };
};

describe("secret versions", () => {
  it("lists versions newest first with their values, paged", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    const versions = scope.tenant.admin.secretVersions;
    const all = expectOk(await versions.list({ params: { secretId }, query: { offset: 0, limit: 20 } }));
    expect(all.secretVersions.map((v) => [v.version, v.secretKey, v.secretValue])).toEqual([
      [3, "KEY2", "three"],
      [2, "KEY", "two"],
      [1, "KEY", "one"],
    ]);
    expect(all.secretVersions.every((v) => v.secretId === secretId && v.id !== secretId && !v.isDeleted)).toBe(true);
    expect(all.secretVersions[2]).toMatchObject({ secretComment: "c1" });
    const page = expectOk(await versions.list({ params: { secretId }, query: { offset: 1, limit: 1 } }));
    expect(page.secretVersions.map((v) => v.version)).toEqual([2]);
  });

  it("reads an older version by name with version=N", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    const { http, projectId } = scope;
    const q = { workspaceId: projectId, environment: "dev" };
    const v1 = await http.get(`${RAW}/KEY`, { ...q, version: "1" });
    expect(v1.status).toBe(200);
    expect(v1.body.secret).toMatchObject({ id: secretId, version: 1, secretValue: "one", secretKey: "KEY" });
    const v3 = await http.get(`${RAW}/KEY2`, { ...q, version: "3" });
    expect(v3.body.secret).toMatchObject({ version: 3, secretValue: "three" });
    expect((await http.get(`${RAW}/KEY2`, { ...q, version: "9" })).status).toBe(404);
    expect((await http.get(`${RAW}/KEY2`, { ...q, version: "x" })).status).toBe(422);
  });

  it("masks values without read-value and refuses callers without version rights", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    const query = { offset: 0, limit: 20 };
    const describer = await identityWithRules(scope, [
      { subject: "secret-rollback", action: ["read"], inverted: false },
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    const masked = expectOk(await describer.client.secretVersions.list({ params: { secretId }, query }));
    expect(masked.secretVersions.every((v) => v.secretValueHidden && v.secretValue === "<hidden-by-infisical>")).toBe(
      true,
    );
    const nobody = await identityWithRules(scope, [{ subject: "secrets", action: ["readValue"], inverted: false }]);
    const refused = await nobody.client.secretVersions.list({ params: { secretId }, query });
    expect(refused).toMatchObject({
      status: 403,
      body: { message: "You do not have permission to read secret versions" },
    });
  });

  it("answers 404 for unknown secrets and another tenant's secret", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    const query = { offset: 0, limit: 20 };
    const unknown = await scope.tenant.admin.secretVersions.list({ params: { secretId: MISSING }, query });
    expect(unknown).toMatchObject({ status: 404, body: { message: `Secret with ID '${MISSING}' not found` } });
    const other = (await createTenant()).admin.secretVersions;
    expect((await other.list({ params: { secretId }, query })).status).toBe(404);
    expect((await other.rollback({ params: { secretId, version: 1 }, body: {} })).status).toBe(404);
  });
});

describe("secret rollback", () => {
  it("restores name, value, comment, tags and metadata as a new version", async () => {
    const scope = await createSecretsScope();
    const { secretId, tag } = await threeVersions(scope);
    const { http, projectId, tenant } = scope;
    const res = expectOk(await tenant.admin.secretVersions.rollback({ params: { secretId, version: 1 }, body: {} }));
    if (!("secret" in res)) throw new Error("the folder is not protected");
    expect(res.secret).toMatchObject({ id: secretId, version: 4, secretKey: "KEY", secretValue: "one" });
    const got = await http.get(`${RAW}/KEY`, { workspaceId: projectId, environment: "dev" });
    expect(got.body.secret).toMatchObject({
      version: 4,
      secretValue: "one",
      secretComment: "c1",
      tags: [{ id: tag.id, slug: "a" }],
      secretMetadata: [{ key: "owner", value: "ops", isEncrypted: false }],
    });
    expect((await http.get(`${RAW}/KEY2`, { workspaceId: projectId, environment: "dev" })).status).toBe(404);
    const versions = expectOk(
      await tenant.admin.secretVersions.list({ params: { secretId }, query: { offset: 0, limit: 1 } }),
    );
    expect(versions.secretVersions[0]).toMatchObject({ version: 4, secretValue: "one" });
  });

  it("refuses a rollback onto a name another secret now holds", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    await putSecret(scope.http, scope.projectId, "KEY", "newcomer");
    const res = await scope.tenant.admin.secretVersions.rollback({ params: { secretId, version: 1 }, body: {} });
    expect(res).toMatchObject({ status: 400, body: { message: "Secret with the new name already exist" } });
  });

  it("answers 404 for an unknown version or secret", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    const versions = scope.tenant.admin.secretVersions;
    expect((await versions.rollback({ params: { secretId, version: 9 }, body: {} })).status).toBe(404);
    expect((await versions.rollback({ params: { secretId: MISSING, version: 1 }, body: {} })).status).toBe(404);
  });

  it("needs rollback rights and edit on the secret as it is and as it will be", async () => {
    const scope = await createSecretsScope();
    const { secretId } = await threeVersions(scope);
    const reader = await identityWithRules(scope, [
      { subject: "secret-rollback", action: ["read"], inverted: false },
      { subject: "secrets", action: ["describeSecret", "readValue", "edit"], inverted: false },
    ]);
    const noRollback = await reader.client.secretVersions.rollback({ params: { secretId, version: 1 }, body: {} });
    expect(noRollback.status).toBe(403);
    const narrow = await identityWithRules(scope, [
      { subject: "secret-rollback", action: ["read", "create"], inverted: false },
      { subject: "secrets", action: ["describeSecret", "readValue"], inverted: false },
      { subject: "secrets", action: ["edit"], inverted: false, conditions: { secretName: "KEY2" } },
    ]);
    const toOldName = await narrow.client.secretVersions.rollback({ params: { secretId, version: 1 }, body: {} });
    expect(toOldName.status).toBe(403);
    const sameName = await narrow.client.secretVersions.rollback({ params: { secretId, version: 3 }, body: {} });
    expect(sameName.status).toBe(200);
  });
});
