import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createScope, createSqlSecret, identityWithRules, scopeOf, sqlInputs, targetUrl } from "./helpers";

describe("POST /api/v1/dynamic-secrets", () => {
  it("creates a PostgreSQL dynamic secret and never returns or stores the root password in clear", async () => {
    const scope = await createScope();
    const name = uniqueName("pg");
    const res = await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name,
        provider: { type: "sql-database", inputs: sqlInputs() },
        defaultTTL: "1h",
        maxTTL: "1d",
        metadata: [{ key: "team", value: "data" }],
      },
    });
    expect(res.status).toBe(200);
    const body = expectOk(res);
    expect(body.dynamicSecret).toMatchObject({
      name,
      type: "sql-database",
      defaultTTL: "1h",
      maxTTL: "1d",
      status: null,
      usernameTemplate: null,
      metadata: [{ key: "team", value: "data" }],
    });
    expect(body.dynamicSecret.inputs).toMatchObject({ host: targetUrl().hostname, client: "postgres" });
    expect(body.dynamicSecret.inputs).not.toHaveProperty("password");
    expect(JSON.stringify(body)).not.toContain(decodeURIComponent(targetUrl().password));

    const stored = await scope.tenant.app.deps.db
      .selectFrom("dynamic_secrets")
      .select("encrypted_inputs")
      .where("id", "=", body.dynamicSecret.id)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_inputs.startsWith("v2:")).toBe(true);
    expect(stored.encrypted_inputs).not.toContain(decodeURIComponent(targetUrl().password));
  });

  it("accepts metadata as a plain object (the SDK's type) and lower-cases the name", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope, { name: "Mixed-Case", metadata: { owner: "ops" } });
    expect(secret.name).toBe("mixed-case");
    expect(secret.metadata).toEqual([{ key: "owner", value: "ops" }]);
  });

  it("rejects a duplicate name in the same folder with 400", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const again = await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name: secret.name,
        provider: { type: "sql-database", inputs: sqlInputs() },
        defaultTTL: "1h",
      },
    });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "Provided dynamic secret already exists under the folder" });
  });

  it("answers 401 without a token, 422 on invalid input, 404 for unknown project or folder", async () => {
    const scope = await createScope();
    const body = {
      ...scopeOf(scope),
      name: uniqueName("pg"),
      provider: { type: "sql-database" as const, inputs: sqlInputs() },
      defaultTTL: "1h",
    };
    expect((await scope.tenant.anonymous.dynamicSecrets.create({ body })).status).toBe(401);

    const tooShort = await scope.tenant.admin.dynamicSecrets.create({ body: { ...body, defaultTTL: "30s" } });
    expect(tooShort.status).toBe(422);
    expect(JSON.stringify(tooShort.body)).toContain("TTL must be a greater than 1min");
    const tooLong = await scope.tenant.admin.dynamicSecrets.create({ body: { ...body, maxTTL: "11y" } });
    expect(tooLong.status).toBe(422);
    expect(JSON.stringify(tooLong.body)).toContain("TTL must be less than 10 years");
    const badProvider = await scope.tenant.admin.dynamicSecrets.create({
      body: { ...body, provider: { type: "no-such-provider", inputs: {} } } as never,
    });
    expect(badProvider.status).toBe(422);
    const badTemplate = await scope.tenant.admin.dynamicSecrets.create({
      body: { ...body, usernameTemplate: "{{identity.name}}" },
    });
    expect(badTemplate.status).toBe(422);

    const noProject = await scope.tenant.admin.dynamicSecrets.create({
      body: { ...body, projectSlug: "missing-project" },
    });
    expect(noProject.status).toBe(404);
    expect(noProject.body).toMatchObject({ message: "Project with slug 'missing-project' not found" });
    const noFolder = await scope.tenant.admin.dynamicSecrets.create({ body: { ...body, path: "/nowhere" } });
    expect(noFolder.status).toBe(404);
    expect(noFolder.body).toMatchObject({ message: "Folder with path '/nowhere' in environment 'dev' not found" });

    const other = await createTenant();
    const foreign = await other.admin.dynamicSecrets.create({ body });
    expect(foreign.status).toBe(404);
  });

  it("answers 403 without create-root-credential, and 400 for bad statements or an unreachable target", async () => {
    const scope = await createScope();
    const body = {
      ...scopeOf(scope),
      name: uniqueName("pg"),
      provider: { type: "sql-database" as const, inputs: sqlInputs() },
      defaultTTL: "1h",
    };
    const viewer = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "viewer" });
    const denied = await viewer.client.dynamicSecrets.create({ body });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create-root-credential on dynamic-secrets",
    });
    const outsider = await createIdentity(scope.tenant);
    expect((await outsider.client.dynamicSecrets.create({ body })).status).toBe(403);

    const badStatement = await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...body,
        provider: { type: "sql-database", inputs: sqlInputs({ revocationStatement: "DROP ROLE {{password}}" }) },
      },
    });
    expect(badStatement.status).toBe(400);
    const wrongPassword = await scope.tenant.admin.dynamicSecrets.create({
      body: { ...body, provider: { type: "sql-database", inputs: sqlInputs({ password: "not-the-password" }) } },
    });
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body).toMatchObject({ message: expect.stringContaining("Failed to connect with provider") });
    expect(JSON.stringify(wrongPassword.body)).not.toContain("not-the-password");

    const certProject = await createProject(scope.tenant, "cert-manager");
    const wrongType = await scope.tenant.admin.dynamicSecrets.create({
      body: { ...body, projectSlug: certProject.slug },
    });
    expect(wrongType.status).toBe(400);
  });

  it("honours metadata conditions on create-root-credential", async () => {
    const scope = await createScope();
    const identity = await identityWithRules(scope, [
      {
        subject: "dynamic-secrets",
        action: ["create-root-credential"],
        inverted: false,
        conditions: { metadata: { $elemMatch: { key: { $eq: "team" }, value: { $eq: "a" } } } },
      },
    ]);
    const body = {
      ...scopeOf(scope),
      name: uniqueName("pg"),
      provider: { type: "sql-database" as const, inputs: sqlInputs() },
      defaultTTL: "1h",
    };
    expect(
      (await identity.client.dynamicSecrets.create({ body: { ...body, metadata: [{ key: "team", value: "b" }] } }))
        .status,
    ).toBe(403);
    expect(
      (await identity.client.dynamicSecrets.create({ body: { ...body, metadata: [{ key: "team", value: "a" }] } }))
        .status,
    ).toBe(200);
  });
});

describe("GET, PATCH, DELETE /api/v1/dynamic-secrets/{name} and list", () => {
  it("reads, lists, updates and deletes by name", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const got = expectOk(
      await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) }),
    );
    expect(got.dynamicSecret).toMatchObject({ id: secret.id, name: secret.name });
    expect(got.dynamicSecret.inputs).not.toHaveProperty("password");

    const listed = expectOk(await scope.tenant.admin.dynamicSecrets.list({ query: scopeOf(scope) }));
    expect(listed.dynamicSecrets.map((d) => d.id)).toEqual([secret.id]);

    const newName = uniqueName("renamed");
    const updated = expectOk(
      await scope.tenant.admin.dynamicSecrets.update({
        params: { name: secret.name },
        body: {
          ...scopeOf(scope),
          data: { newName, defaultTTL: "2h", maxTTL: null, inputs: { port: Number(targetUrl().port) } },
        },
      }),
    );
    expect(updated.dynamicSecret).toMatchObject({ name: newName, defaultTTL: "2h", maxTTL: null });
    expect(updated.dynamicSecret.inputs).not.toHaveProperty("password");

    const deleted = expectOk(
      await scope.tenant.admin.dynamicSecrets.delete({ params: { name: newName }, body: { ...scopeOf(scope) } }),
    );
    expect(deleted.dynamicSecret.id).toBe(secret.id);
    const gone = await scope.tenant.admin.dynamicSecrets.get({ params: { name: newName }, query: scopeOf(scope) });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ message: `Dynamic secret with name '${newName}' in folder '/' not found` });
  });

  it("keeps the stored root password when an update leaves it out, and validates merged inputs", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const invalid = await scope.tenant.admin.dynamicSecrets.update({
      params: { name: secret.name },
      body: { ...scopeOf(scope), data: { inputs: { port: "not-a-port" } } },
    });
    expect(invalid.status).toBe(422);
    const broken = await scope.tenant.admin.dynamicSecrets.update({
      params: { name: secret.name },
      body: { ...scopeOf(scope), data: { inputs: { password: "wrong-password" } } },
    });
    expect(broken.status).toBe(400);
    const lease = await scope.tenant.admin.dynamicSecretLeases.create({
      body: { ...scopeOf(scope), dynamicSecretName: secret.name },
    });
    expect(lease.status).toBe(200);
  });

  it("answers 401, 422, 404 and 403 on the by-name routes", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const params = { name: secret.name };
    expect((await scope.tenant.anonymous.dynamicSecrets.get({ params, query: scopeOf(scope) })).status).toBe(401);
    expect((await scope.tenant.anonymous.dynamicSecrets.list({ query: scopeOf(scope) })).status).toBe(401);
    expect(
      (await scope.tenant.admin.dynamicSecrets.get({ params, query: { ...scopeOf(scope), projectSlug: "" } })).status,
    ).toBe(422);
    expect(
      (
        await scope.tenant.admin.dynamicSecrets.update({
          params,
          body: { ...scopeOf(scope), data: { defaultTTL: "1s" } },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await scope.tenant.admin.dynamicSecrets.delete({
          params,
          body: { ...scopeOf(scope), isForced: "yes" as never },
        })
      ).status,
    ).toBe(422);

    expect(
      (await scope.tenant.anonymous.dynamicSecrets.update({ params, body: { ...scopeOf(scope), data: {} } })).status,
    ).toBe(401);
    expect((await scope.tenant.anonymous.dynamicSecrets.delete({ params, body: scopeOf(scope) })).status).toBe(401);
    expect(
      (await scope.tenant.admin.dynamicSecrets.list({ query: { ...scopeOf(scope), environmentSlug: "" } })).status,
    ).toBe(422);
    expect(
      (
        await scope.tenant.admin.dynamicSecrets.listLeases({
          params,
          query: { ...scopeOf(scope), path: "x".repeat(2000) },
        })
      ).status,
    ).toBe(422);

    expect(
      (await scope.tenant.admin.dynamicSecrets.get({ params: { name: "missing" }, query: scopeOf(scope) })).status,
    ).toBe(404);
    expect(
      (
        await scope.tenant.admin.dynamicSecrets.update({
          params: { name: "missing" },
          body: { ...scopeOf(scope), data: {} },
        })
      ).status,
    ).toBe(404);
    expect(
      (await scope.tenant.admin.dynamicSecrets.delete({ params: { name: "missing" }, body: scopeOf(scope) })).status,
    ).toBe(404);
    expect(
      (await scope.tenant.admin.dynamicSecrets.get({ params, query: { ...scopeOf(scope), environmentSlug: "qa" } }))
        .status,
    ).toBe(404);
    expect(
      (await scope.tenant.admin.dynamicSecrets.list({ query: { ...scopeOf(scope), path: "/missing" } })).status,
    ).toBe(404);
    const other = await createTenant();
    expect((await other.admin.dynamicSecrets.get({ params, query: scopeOf(scope) })).status).toBe(404);
    expect((await other.admin.dynamicSecrets.delete({ params, body: scopeOf(scope) })).status).toBe(404);

    // A member without access to the project's dynamic secrets (the built-in viewer reads their metadata).
    const viewer = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "no-access" });
    expect((await viewer.client.dynamicSecrets.get({ params, query: scopeOf(scope) })).status).toBe(403);
    expect((await viewer.client.dynamicSecrets.list({ query: scopeOf(scope) })).status).toBe(403);
    expect(
      (await viewer.client.dynamicSecrets.update({ params, body: { ...scopeOf(scope), data: { defaultTTL: "2h" } } }))
        .status,
    ).toBe(403);
    expect((await viewer.client.dynamicSecrets.delete({ params, body: scopeOf(scope) })).status).toBe(403);

    const another = await createSqlSecret(scope);
    const rename = await scope.tenant.admin.dynamicSecrets.update({
      params,
      body: { ...scopeOf(scope), data: { newName: another.name } },
    });
    expect(rename.status).toBe(400);
    expect(rename.body).toMatchObject({ message: "Provided dynamic secret already exists under the folder" });
  });

  it("needs both read and edit root credential to read details, and filters the list by metadata", async () => {
    const scope = await createScope();
    const visible = await createSqlSecret(scope, { metadata: [{ key: "team", value: "a" }] });
    await createSqlSecret(scope, { metadata: [{ key: "team", value: "b" }] });
    const reader = await identityWithRules(scope, [
      {
        subject: "dynamic-secrets",
        action: ["read-root-credential"],
        inverted: false,
        conditions: { metadata: { $elemMatch: { key: { $eq: "team" }, value: { $eq: "a" } } } },
      },
    ]);
    // The list's first check carries no metadata, so a rule that requires some does not pass it (reference).
    expect((await reader.client.dynamicSecrets.list({ query: scopeOf(scope) })).status).toBe(403);
    const broad = await identityWithRules(scope, [
      { subject: "dynamic-secrets", action: ["read-root-credential"], inverted: false },
      {
        subject: "dynamic-secrets",
        action: ["read-root-credential"],
        inverted: true,
        conditions: { metadata: { $elemMatch: { key: { $eq: "team" }, value: { $eq: "b" } } } },
      },
    ]);
    const listed = expectOk(await broad.client.dynamicSecrets.list({ query: scopeOf(scope) }));
    expect(listed.dynamicSecrets.map((d) => d.id)).toEqual([visible.id]);
    expect(
      (await broad.client.dynamicSecrets.get({ params: { name: visible.name }, query: scopeOf(scope) })).status,
    ).toBe(403);
  });

  it("works in nested folders", async () => {
    const scope = await createScope();
    expectOk(
      await scope.tenant.admin.folders.create({
        body: { workspaceId: scope.projectId, environment: "dev", path: "/", name: "apps" },
      }),
    );
    const nested = { ...scope, path: "/apps" };
    const secret = await createSqlSecret(nested);
    const listed = expectOk(
      await scope.tenant.admin.dynamicSecrets.list({ query: { ...scopeOf(nested), path: "/apps/" } }),
    );
    expect(listed.dynamicSecrets.map((d) => d.id)).toEqual([secret.id]);
    expect(expectOk(await scope.tenant.admin.dynamicSecrets.list({ query: scopeOf(scope) })).dynamicSecrets).toEqual(
      [],
    );
  });
});
