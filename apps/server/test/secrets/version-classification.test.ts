import { describe, expect, it } from "vitest";
import type { Conditions } from "../../src/permissions/types";
import { createSecretsScope, expectOk, identityWithRules, putSecret, type SecretsScope } from "./helpers";

const RAW = "/api/v3/secrets/raw";
const V4 = "/api/v4/secrets";
const query = { offset: 0, limit: 20 };

const readEverythingBut = (scope: SecretsScope, denied: Conditions) =>
  identityWithRules(scope, [
    { subject: "secret-rollback", action: ["read"], inverted: false },
    { subject: "secrets", action: ["describeSecret", "readValue"], inverted: false },
    { subject: "secrets", action: ["describeSecret", "readValue"], inverted: true, conditions: denied },
  ]);

describe("an old version is read under the secret's classification now", () => {
  it("a secret tagged private after it was written: its old versions are as closed as it is", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId, http } = scope;
    const tag = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "private", color: "" } }),
    ).tag;
    const secret = await putSecret(http, projectId, "RETAG_ME", "canary-retag");
    const base = { workspaceId: projectId, environment: "dev" };
    expect((await http.patch(`${RAW}/RETAG_ME`, { ...base, tagIds: [tag.id] })).status).toBe(200);

    const reader = await readEverythingBut(scope, { secretTags: { $in: ["private"] } });
    for (const path of [`${RAW}/RETAG_ME`, `${V4}/RETAG_ME`]) {
      const old = await reader.http.get(path, { ...base, projectId, version: "1" });
      expect(old.status).toBe(403);
      expect(JSON.stringify(old.body)).not.toContain("canary-retag");
    }
    const history = expectOk(await reader.client.secretVersions.list({ params: { secretId: secret.id }, query }));
    expect(history.secretVersions).toHaveLength(2);
    expect(history.secretVersions.every((v) => v.secretValueHidden)).toBe(true);
    expect(JSON.stringify(history)).not.toContain("canary-retag");

    // The owner still reads version 1 by name.
    const owner = await http.get(`${RAW}/RETAG_ME`, { ...base, version: "1" });
    expect(owner.body.secret).toMatchObject({ version: 1, secretValue: "canary-retag" });
  });

  it("a renamed secret: a grant on the old name no longer reads it through the old name", async () => {
    const scope = await createSecretsScope();
    const { projectId, http } = scope;
    const secret = await putSecret(http, projectId, "PUBLIC_RN", "canary-rename");
    const base = { workspaceId: projectId, environment: "dev" };
    expect((await http.patch(`${RAW}/PUBLIC_RN`, { ...base, newSecretName: "RENAMED_RN" })).status).toBe(200);

    const publicOnly = await identityWithRules(scope, [
      { subject: "secret-rollback", action: ["read"], inverted: false },
      {
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        inverted: false,
        conditions: { secretName: { $glob: "PUBLIC_*" } },
      },
    ]);
    for (const path of [`${RAW}/PUBLIC_RN`, `${V4}/PUBLIC_RN`]) {
      const old = await publicOnly.http.get(path, { ...base, projectId, version: "1" });
      expect(old.status).toBe(403);
      expect(JSON.stringify(old.body)).not.toContain("canary-rename");
    }
    const history = expectOk(await publicOnly.client.secretVersions.list({ params: { secretId: secret.id }, query }));
    expect(history.secretVersions.map((v) => [v.secretKey, v.secretValueHidden])).toEqual([
      ["RENAMED_RN", true],
      ["PUBLIC_RN", true],
    ]);

    // A caller allowed the new name but not the old one does not read the old version either.
    const renamedOnly = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        inverted: false,
        conditions: { secretName: "RENAMED_RN" },
      },
    ]);
    expect((await renamedOnly.http.get(`${RAW}/PUBLIC_RN`, { ...base, version: "1" })).status).toBe(403);
    // Who may read both reads it.
    const both = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret", "readValue"], inverted: false },
    ]);
    const read = await both.http.get(`${RAW}/PUBLIC_RN`, { ...base, version: "1" });
    expect(read.body.secret).toMatchObject({ secretKey: "PUBLIC_RN", secretValue: "canary-rename" });
  });
});
