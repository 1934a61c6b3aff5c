import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import {
  canLogin,
  createScope,
  createSqlSecret,
  identityWithRules,
  leaseOf,
  openSession,
  roleExists,
  scopeOf,
  targetQuery,
} from "./helpers";

const roleValidUntil = async (name: string) =>
  new Date(
    (await targetQuery<{ until: Date }>("select rolvaliduntil as until from pg_roles where rolname = $1", [name]))[0]!
      .until,
  ).getTime();

describe("POST /api/v1/dynamic-secrets/leases (PostgreSQL)", () => {
  it("hands out a real login, VALID UNTIL the lease's expiry, that stops working once revoked", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const before = Date.now();
    const { lease, dynamicSecret, data } = await leaseOf(scope, secret.name, { ttl: "10m" });
    expect(dynamicSecret).toMatchObject({ id: secret.id, name: secret.name });
    expect(dynamicSecret).not.toHaveProperty("inputs");
    expect(Object.keys(data).sort()).toEqual(["DB_PASSWORD", "DB_USERNAME"]);
    expect(lease).toMatchObject({
      dynamicSecretId: secret.id,
      externalEntityId: data.DB_USERNAME,
      version: 1,
      status: null,
      config: null,
    });
    const expireAt = new Date(lease.expireAt).getTime();
    expect(expireAt).toBeGreaterThanOrEqual(before + 600_000);
    expect(expireAt).toBeLessThanOrEqual(Date.now() + 600_000);
    expect(data.DB_PASSWORD).toMatch(/^[A-Za-z0-9\-_.~!*]{48}$/);

    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);
    expect(Math.abs((await roleValidUntil(data.DB_USERNAME!)) - expireAt)).toBeLessThan(1_000);
    const session = await openSession(data.DB_USERNAME!, data.DB_PASSWORD!);

    const revoked = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({
        params: { leaseId: lease.id },
        body: { ...scopeOf(scope) },
      }),
    );
    expect(revoked.lease.id).toBe(lease.id);
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(false);
    expect(await roleExists(data.DB_USERNAME!)).toBe(false);
    // A session opened before the revocation is ended with it.
    await expect(session.query("select 1")).rejects.toThrow();
    await session.end().catch(() => undefined);
    const after = await scope.tenant.admin.dynamicSecretLeases.get({
      params: { leaseId: lease.id },
      query: scopeOf(scope),
    });
    expect(after.status).toBe(404);
    expect(after.body).toMatchObject({ message: `Dynamic secret lease with ID '${lease.id}' not found` });
  });

  it("uses the default TTL, enforces the max TTL and applies the username template", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope, {
      defaultTTL: "5m",
      maxTTL: "1h",
      usernameTemplate: "app-{{randomUsername}}",
    });
    const { lease, data } = await leaseOf(scope, secret.name);
    const ttl = new Date(lease.expireAt).getTime() - new Date(lease.createdAt).getTime();
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThan(310_000);
    expect(data.DB_USERNAME).toMatch(/^app-kw_[a-z0-9]{8}_[0-9a-f]{32}$/);
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);

    const tooLong = await scope.tenant.admin.dynamicSecretLeases.create({
      body: { ...scopeOf(scope), dynamicSecretName: secret.name, ttl: "2h" },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ message: "TTL cannot be larger than max TTL" });
  });

  it("answers 401, 422, 404 and 403 as the reference does", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const body = { ...scopeOf(scope), dynamicSecretName: secret.name };
    expect((await scope.tenant.anonymous.dynamicSecretLeases.create({ body })).status).toBe(401);

    const short = await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...body, ttl: "59s" } });
    expect(short.status).toBe(422);
    expect(JSON.stringify(short.body)).toContain("TTL must be a greater than 1min");
    const long = await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...body, ttl: "11y" } });
    expect(long.status).toBe(422);
    expect(JSON.stringify(long.body)).toContain("TTL must be less than 10 years");
    expect(
      (await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...body, dynamicSecretName: "" } })).status,
    ).toBe(422);

    const noProject = await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...body, projectSlug: "nope" } });
    expect(noProject.body).toMatchObject({ statusCode: 404, message: "Project with slug 'nope' not found" });
    const noFolder = await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...body, path: "/x/" } });
    expect(noFolder.body).toMatchObject({
      statusCode: 404,
      message: "Folder with path '/x' in environment with slug 'dev' not found",
    });
    const noSecret = await scope.tenant.admin.dynamicSecretLeases.create({
      body: { ...body, dynamicSecretName: "Missing" },
    });
    expect(noSecret.body).toMatchObject({
      statusCode: 404,
      message: "Dynamic secret with name 'missing' in folder with path '/' not found",
    });
    const other = await createTenant();
    expect((await other.admin.dynamicSecretLeases.create({ body })).status).toBe(404);

    const viewer = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "viewer" });
    const denied = await viewer.client.dynamicSecretLeases.create({ body });
    expect(denied.body).toMatchObject({
      statusCode: 403,
      error: "PermissionDenied",
      message: "You are not allowed to lease on dynamic-secrets",
    });
    const member = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "member" });
    const leased = expectOk(await member.client.dynamicSecretLeases.create({ body }));
    expect(await canLogin(leased.data.DB_USERNAME!, leased.data.DB_PASSWORD!)).toBe(true);
  });

  it("refuses a lease beyond the per-secret limit with 400", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const db = scope.tenant.app.deps.db;
    await sql`insert into dynamic_secret_leases (id, dynamic_secret_id, external_entity_id, expire_at, state)
      select gen_random_uuid(), ${secret.id}::uuid, 'filler-' || n, now() + interval '1 day', 'active' from generate_series(1, 10000) as n`.execute(
      db,
    );
    try {
      const res = await scope.tenant.admin.dynamicSecretLeases.create({
        body: { ...scopeOf(scope), dynamicSecretName: secret.name },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: "Max lease limit reached. Limit: 10000" });
    } finally {
      await db.deleteFrom("dynamic_secret_leases").where("dynamic_secret_id", "=", secret.id).execute();
    }
  });

  it("checks the lease permission against environment and path conditions", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const prodOnly = await identityWithRules(scope, [
      {
        subject: "dynamic-secrets",
        action: ["lease"],
        inverted: false,
        conditions: { environment: "prod", secretPath: { $glob: "/**" } },
      },
    ]);
    expect(
      (
        await prodOnly.client.dynamicSecretLeases.create({
          body: { ...scopeOf(scope), dynamicSecretName: secret.name },
        })
      ).status,
    ).toBe(403);
    const devOnly = await identityWithRules(scope, [
      {
        subject: "dynamic-secrets",
        action: ["lease"],
        inverted: false,
        conditions: { environment: "dev", secretPath: { $glob: "/**" } },
      },
    ]);
    expect(
      (await devOnly.client.dynamicSecretLeases.create({ body: { ...scopeOf(scope), dynamicSecretName: secret.name } }))
        .status,
    ).toBe(200);
  });

  it("reports the provider's failure as 400 and leaves no lease or role behind", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(
      scope,
      {},
      { creationStatement: `CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}'; SELECT no_such_function()` },
    );
    const res = await scope.tenant.admin.dynamicSecretLeases.create({
      body: { ...scopeOf(scope), dynamicSecretName: secret.name },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: expect.stringContaining("Failed to create lease from provider") });
    const leases = expectOk(
      await scope.tenant.admin.dynamicSecrets.listLeases({ params: { name: secret.name }, query: scopeOf(scope) }),
    );
    expect(leases.leases).toEqual([]);
    const rows = await scope.tenant.app.deps.db
      .selectFrom("dynamic_secret_leases")
      .select("id")
      .where("dynamic_secret_id", "=", secret.id)
      .execute();
    expect(rows).toEqual([]);
    const prefix = (
      await scope.tenant.app.deps.db
        .selectFrom("dynamic_secrets")
        .select("entity_prefix")
        .where("id", "=", secret.id)
        .executeTakeFirstOrThrow()
    ).entity_prefix;
    expect(await targetQuery("select rolname from pg_roles where strpos(rolname, $1) > 0", [prefix])).toEqual([]);
  });
});
