import { describe, expect, it } from "vitest";
import type { PermissionRule } from "../../src/permissions";
import { createSecretsScope, expectOk, expectWritten, identityWithRules, type SecretsScope } from "./helpers";

const WRITE = ["describeSecret", "readValue", "create", "edit", "delete"];

/** Every secret right, but only on names matching PUBLIC_*. */
const publicOnly: PermissionRule[] = [
  { subject: "secrets", action: WRITE, inverted: false, conditions: { secretName: { $glob: "PUBLIC_*" } } },
];

/** Every secret right, except creating or editing anything tagged `admin`. */
const notUnderAdminTag: PermissionRule[] = [
  { subject: "secrets", action: WRITE, inverted: false },
  { subject: "secrets", action: ["create", "edit"], inverted: true, conditions: { secretTags: { $in: ["admin"] } } },
];

const denied = (action: string) => ({ status: 403, body: { message: `You are not allowed to ${action} on secrets` } });

/** What the admin sees of a key in dev at `/`: its value and tag slugs, or the status when it cannot be read. */
const stored = async (scope: SecretsScope, key: string) => {
  const res = await scope.tenant.admin.secretsV4.get({
    params: { secretName: key },
    query: { projectId: scope.projectId, environment: "dev", secretPath: "/" },
  });
  if (res.status !== 200) return res.status;
  return { value: res.body.secret.secretValue, tags: res.body.secret.tags.map((t) => t.slug) };
};

const put = async (scope: SecretsScope, key: string, value: string, tagIds: string[] = []) =>
  expectWritten(
    await scope.tenant.admin.secretsV4.create({
      params: { secretName: key },
      body: { projectId: scope.projectId, environment: "dev", secretPath: "/", secretValue: value, tagIds },
    }),
  ).secret;

const tag = async (scope: SecretsScope, slug: string) =>
  expectOk(
    await scope.tenant.admin.secretTags.projects.create({
      params: { projectId: scope.projectId },
      body: { slug, color: "" },
    }),
  ).tag;

describe("a secret write is checked against the name and tags it stores", () => {
  it("tells a caller who may not create a name that they may not, not whether it is taken (single and batch)", async () => {
    const scope = await createSecretsScope();
    await put(scope, "TAKEN_SECRET", "hidden");
    const caller = await identityWithRules(scope, publicOnly);
    const where = { projectId: scope.projectId, environment: "dev", secretPath: "/" };
    for (const secretName of ["TAKEN_SECRET", "FREE_SECRET"]) {
      expect(
        await caller.client.secretsV4.create({ params: { secretName }, body: { ...where, secretValue: "x" } }),
      ).toMatchObject(denied("create"));
      expect(
        await caller.client.secretsV4.batchCreate({
          body: { ...where, secrets: [{ secretKey: secretName, secretValue: "x" }] },
        }),
      ).toMatchObject(denied("create"));
    }
    // One who may create it still hears that it is taken.
    expect(
      await scope.tenant.admin.secretsV4.create({
        params: { secretName: "TAKEN_SECRET" },
        body: { ...where, secretValue: "x" },
      }),
    ).toMatchObject({ status: 400, body: { message: "Secret already exist" } });
    expect(await stored(scope, "TAKEN_SECRET")).toEqual({ value: "hidden", tags: [] });
  });

  it("tells a caller who may not edit or delete a name that they may not, not whether it exists (single and batch)", async () => {
    const scope = await createSecretsScope();
    await put(scope, "TAKEN_SECRET", "hidden");
    const caller = await identityWithRules(scope, publicOnly);
    const where = { projectId: scope.projectId, environment: "dev", secretPath: "/" };
    for (const secretName of ["TAKEN_SECRET", "ABSENT_SECRET"]) {
      expect(
        await caller.client.secretsV4.update({ params: { secretName }, body: { ...where, secretValue: "x" } }),
      ).toMatchObject(denied("edit"));
      expect(
        await caller.client.secretsV4.batchUpdate({
          body: { ...where, secrets: [{ secretKey: secretName, secretValue: "x" }] },
        }),
      ).toMatchObject(denied("edit"));
      expect(await caller.client.secretsV4.delete({ params: { secretName }, body: where })).toMatchObject(
        denied("delete"),
      );
      expect(
        await caller.client.secretsV4.batchDelete({ body: { ...where, secrets: [{ secretKey: secretName }] } }),
      ).toMatchObject(denied("delete"));
    }
    // Within its names the caller still hears which are missing.
    expect(
      await caller.client.secretsV4.update({
        params: { secretName: "PUBLIC_ABSENT" },
        body: { ...where, secretValue: "x" },
      }),
    ).toMatchObject({ status: 404 });
    expect(
      await caller.client.secretsV4.batchDelete({ body: { ...where, secrets: [{ secretKey: "PUBLIC_ABSENT" }] } }),
    ).toMatchObject({ status: 404 });
    expect(await stored(scope, "TAKEN_SECRET")).toEqual({ value: "hidden", tags: [] });
  });

  it("v4 batch upsert refuses to create a missing key under a newSecretName the caller may not create (403, nothing written)", async () => {
    const scope = await createSecretsScope();
    const caller = await identityWithRules(scope, publicOnly);
    const res = await caller.client.secretsV4.batchUpdate({
      body: {
        projectId: scope.projectId,
        environment: "dev",
        secretPath: "/",
        mode: "upsert",
        secrets: [{ secretKey: "PUBLIC_UP_x", newSecretName: "ADMIN_ONLY_x", secretValue: "planted" }],
      },
    });
    expect(res).toMatchObject(denied("create"));
    expect(await stored(scope, "ADMIN_ONLY_x")).toBe(404);
    expect(await stored(scope, "PUBLIC_UP_x")).toBe(404);
  });

  it("v3 batch upsert refuses to create a missing key under a newSecretName the caller may not create (403, nothing written)", async () => {
    const scope = await createSecretsScope();
    const caller = await identityWithRules(scope, publicOnly);
    const res = await caller.client.secretsV3.batchUpdate({
      body: {
        workspaceId: scope.projectId,
        environment: "dev",
        secretPath: "/",
        mode: "upsert",
        secrets: [
          { secretKey: "PUBLIC_OK", secretValue: "fine" },
          { secretKey: "PUBLIC_UP_x", newSecretName: "ADMIN_ONLY_x", secretValue: "planted" },
        ],
      },
    });
    expect(res).toMatchObject(denied("create"));
    expect(await stored(scope, "ADMIN_ONLY_x")).toBe(404);
    expect(await stored(scope, "PUBLIC_UP_x")).toBe(404);
    expect(await stored(scope, "PUBLIC_OK")).toBe(404);
  });

  it("batch upsert creates a missing key under the newSecretName it was given when the caller may create it", async () => {
    const scope = await createSecretsScope();
    const caller = await identityWithRules(scope, publicOnly);
    const res = expectWritten(
      await caller.client.secretsV4.batchUpdate({
        body: {
          projectId: scope.projectId,
          environment: "dev",
          secretPath: "/",
          mode: "upsert",
          secrets: [{ secretKey: "PUBLIC_UP_y", newSecretName: "PUBLIC_NEW_y", secretValue: "v" }],
        },
      }),
    );
    expect(res.secrets.map((s) => s.secretKey)).toEqual(["PUBLIC_NEW_y"]);
    expect(await stored(scope, "PUBLIC_NEW_y")).toEqual({ value: "v", tags: [] });
  });

  it("batch upsert refuses to create a missing key with a tag the caller may not create under (403, nothing written)", async () => {
    const scope = await createSecretsScope();
    const admin = await tag(scope, "admin");
    const caller = await identityWithRules(scope, notUnderAdminTag);
    const common = {
      environment: "dev",
      secretPath: "/",
      mode: "upsert" as const,
      secrets: [{ secretKey: "TAGGED_NEW", secretValue: "planted", tagIds: [admin.id] }],
    };
    const v4 = await caller.client.secretsV4.batchUpdate({ body: { projectId: scope.projectId, ...common } });
    expect(v4).toMatchObject(denied("create"));
    const v3 = await caller.client.secretsV3.batchUpdate({ body: { workspaceId: scope.projectId, ...common } });
    expect(v3).toMatchObject(denied("create"));
    expect(await stored(scope, "TAGGED_NEW")).toBe(404);
  });

  it("an update that adds a tag the caller may not write under is refused on every route (403, tags unchanged)", async () => {
    const scope = await createSecretsScope();
    const admin = await tag(scope, "admin");
    const plain = await tag(scope, "plain");
    await put(scope, "SECRET", "before", [plain.id]);
    const caller = await identityWithRules(scope, notUnderAdminTag);
    const { projectId } = scope;
    const tagIds = [plain.id, admin.id];
    const attempts = [
      () =>
        caller.client.secretsV4.update({
          params: { secretName: "SECRET" },
          body: { projectId, environment: "dev", secretPath: "/", tagIds, secretValue: "after" },
        }),
      () =>
        caller.client.secretsV3.update({
          params: { secretName: "SECRET" },
          body: { workspaceId: projectId, environment: "dev", secretPath: "/", tagIds, secretValue: "after" },
        }),
      ...(["failOnNotFound", "upsert"] as const).flatMap((mode) => [
        () =>
          caller.client.secretsV4.batchUpdate({
            body: { projectId, environment: "dev", secretPath: "/", mode, secrets: [{ secretKey: "SECRET", tagIds }] },
          }),
        () =>
          caller.client.secretsV3.batchUpdate({
            body: {
              workspaceId: projectId,
              environment: "dev",
              secretPath: "/",
              mode,
              secrets: [{ secretKey: "SECRET", tagIds, newSecretName: "RENAMED" }],
            },
          }),
      ]),
    ];
    for (const attempt of attempts) expect(await attempt()).toMatchObject(denied("edit"));
    expect(await stored(scope, "SECRET")).toEqual({ value: "before", tags: ["plain"] });
    expect(await stored(scope, "RENAMED")).toBe(404);
    const allowed = await caller.client.secretsV4.update({
      params: { secretName: "SECRET" },
      body: { projectId, environment: "dev", secretPath: "/", tagIds: [], secretValue: "after" },
    });
    expect(allowed.status).toBe(200);
    expect(await stored(scope, "SECRET")).toEqual({ value: "after", tags: [] });
  });

  it("creating with a tag the caller may not create under is refused, single and batch (403, nothing written)", async () => {
    const scope = await createSecretsScope();
    const admin = await tag(scope, "admin");
    const caller = await identityWithRules(scope, notUnderAdminTag);
    const { projectId } = scope;
    const single = await caller.client.secretsV4.create({
      params: { secretName: "NEW_ONE" },
      body: { projectId, environment: "dev", secretPath: "/", secretValue: "x", tagIds: [admin.id] },
    });
    expect(single).toMatchObject(denied("create"));
    const batch = await caller.client.secretsV3.batchCreate({
      body: {
        workspaceId: projectId,
        environment: "dev",
        secretPath: "/",
        secrets: [{ secretKey: "NEW_ONE", secretValue: "x", tagIds: [admin.id] }],
      },
    });
    expect(batch).toMatchObject(denied("create"));
    expect(await stored(scope, "NEW_ONE")).toBe(404);
  });

  it("a rename needs edit on both the old and the new name, on the single and the batch routes", async () => {
    const scope = await createSecretsScope();
    const { projectId } = scope;
    await put(scope, "PUBLIC_R", "mine");
    await put(scope, "ADMIN_R", "theirs");
    const caller = await identityWithRules(scope, publicOnly);
    const renames = (from: string, to: string) => [
      () =>
        caller.client.secretsV4.update({
          params: { secretName: from },
          body: { projectId, environment: "dev", secretPath: "/", newSecretName: to },
        }),
      () =>
        caller.client.secretsV3.update({
          params: { secretName: from },
          body: { workspaceId: projectId, environment: "dev", secretPath: "/", newSecretName: to },
        }),
      ...(["failOnNotFound", "upsert"] as const).flatMap((mode) => [
        () =>
          caller.client.secretsV4.batchUpdate({
            body: {
              projectId,
              environment: "dev",
              secretPath: "/",
              mode,
              secrets: [{ secretKey: from, newSecretName: to }],
            },
          }),
        () =>
          caller.client.secretsV3.batchUpdate({
            body: {
              workspaceId: projectId,
              environment: "dev",
              secretPath: "/",
              mode,
              secrets: [{ secretKey: from, newSecretName: to }],
            },
          }),
      ]),
    ];
    for (const attempt of [...renames("PUBLIC_R", "ADMIN_STOLEN"), ...renames("ADMIN_R", "PUBLIC_STOLEN")])
      expect(await attempt()).toMatchObject(denied("edit"));
    expect(await stored(scope, "PUBLIC_R")).toEqual({ value: "mine", tags: [] });
    expect(await stored(scope, "ADMIN_R")).toEqual({ value: "theirs", tags: [] });
    expect(await stored(scope, "ADMIN_STOLEN")).toBe(404);
    expect(await stored(scope, "PUBLIC_STOLEN")).toBe(404);
    const allowed = await caller.client.secretsV4.batchUpdate({
      body: {
        projectId,
        environment: "dev",
        secretPath: "/",
        secrets: [{ secretKey: "PUBLIC_R", newSecretName: "PUBLIC_R2" }],
      },
    });
    expect(allowed.status).toBe(200);
    expect(await stored(scope, "PUBLIC_R2")).toEqual({ value: "mine", tags: [] });
  });

  it("a rollback to a version under a name the caller may not edit is refused (403, secret unchanged)", async () => {
    const scope = await createSecretsScope();
    const { projectId } = scope;
    const secret = await put(scope, "ADMIN_OLD", "one");
    expectOk(
      await scope.tenant.admin.secretsV4.update({
        params: { secretName: "ADMIN_OLD" },
        body: { projectId, environment: "dev", secretPath: "/", newSecretName: "PUBLIC_NOW", secretValue: "two" },
      }),
    );
    const caller = await identityWithRules(scope, [
      ...publicOnly,
      { subject: "secret-rollback", action: ["read", "create"], inverted: false },
    ]);
    const res = await caller.client.secretVersions.rollback({ params: { secretId: secret.id, version: 1 }, body: {} });
    expect(res).toMatchObject(denied("edit"));
    expect(await stored(scope, "PUBLIC_NOW")).toEqual({ value: "two", tags: [] });
    expect(await stored(scope, "ADMIN_OLD")).toBe(404);
  });
});
