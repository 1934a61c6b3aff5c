import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { expectOk, uniqueName } from "../helpers/tenant";
import { withTrigger } from "../helpers/triggers";
import { createScope, createSqlSecret, leaseOf, scopeOf, sqlInputs, type LeaseScope } from "./helpers";

const totp = { type: "totp" as const, inputs: { configType: "manual" as const, secret: "JBSWY3DPEHPK3PXP" } };

const createTotpSecret = async (scope: LeaseScope) => {
  const name = uniqueName("totp");
  return expectOk(
    await scope.tenant.admin.dynamicSecrets.create({
      body: { ...scopeOf(scope), name, provider: totp, defaultTTL: "1h" },
    }),
  ).dynamicSecret;
};

describe("inputs PostgreSQL cannot store are 422, never 500", () => {
  it("rejects NUL and unpaired surrogates in scope fields, names and metadata, and unstorable lease config", async () => {
    const scope = await createScope();
    const secret = await createTotpSecret(scope);
    const create = (extra: Record<string, unknown>) =>
      scope.tenant.admin.dynamicSecrets.create({
        body: { ...scopeOf(scope), name: uniqueName("x"), provider: totp, defaultTTL: "1h", ...extra },
      });
    expect((await create({ metadata: [{ key: "k", value: "a\u0000b" }] })).status).toBe(422);
    expect((await create({ metadata: [{ key: "k", value: "a\ud800b" }] })).status).toBe(422);
    expect((await create({ metadata: { "k\u0000": "v" } })).status).toBe(422);
    expect((await create({ projectSlug: "p\u0000" })).status).toBe(422);
    expect((await create({ path: "/a\u0000" })).status).toBe(422);
    const update = await scope.tenant.admin.dynamicSecrets.update({
      params: { name: secret.name },
      body: { ...scopeOf(scope), data: { metadata: [{ key: "k\u0000", value: "" }] } },
    });
    expect(update.status).toBe(422);
    expect(
      (await scope.tenant.admin.dynamicSecrets.get({ params: { name: "a\u0000" }, query: scopeOf(scope) })).status,
    ).toBe(422);

    const lease = (extra: Record<string, unknown>) =>
      scope.tenant.admin.dynamicSecretLeases.create({
        body: { ...scopeOf(scope), dynamicSecretName: secret.name, ...extra },
      });
    expect((await lease({ config: { note: "\u0000" } })).status).toBe(422);
    expect((await lease({ config: { "\ud800": 1 } })).status).toBe(422);
    expect((await lease({ environmentSlug: "dev\u0000" })).status).toBe(422);
    expect((await lease({ dynamicSecretName: `${secret.name}\u0000` })).status).toBe(422);
    const revoke = await scope.tenant.admin.dynamicSecretLeases.delete({
      params: { leaseId: "00000000-0000-4000-8000-000000000000" },
      body: { ...scopeOf(scope), path: "/\u0000" },
    });
    expect(revoke.status).toBe(422);

    // Nesting deep enough to overflow serialisation; the typed client cannot even send it.
    const deep = `${"[".repeat(20_000)}1${"]".repeat(20_000)}`;
    const raw = await fetch(`${scope.tenant.app.baseUrl}/api/v1/dynamic-secrets/leases`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${scope.tenant.adminToken}` },
      body: `{"projectSlug":"${scope.projectSlug}","environmentSlug":"dev","path":"/","dynamicSecretName":"${secret.name}","config":${deep}}`,
    });
    expect(raw.status).toBe(422);

    // Ordinary config and metadata still work.
    expect(expectOk(await lease({ config: { nested: { ok: ["yes", "ünïcode 😀"] } } })).lease.config).toEqual({
      nested: { ok: ["yes", "ünïcode 😀"] },
    });
    expect((await create({ metadata: [{ key: "team", value: "😀" }] })).status).toBe(200);
  });
});

describe("root credentials cannot be redirected", () => {
  it("requires the root password again when an update changes the host or port", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const update = (inputs: Record<string, unknown>) =>
      scope.tenant.admin.dynamicSecrets.update({
        params: { name: secret.name },
        body: { ...scopeOf(scope), data: { inputs } },
      });
    const otherHost = sqlInputs().host === "localhost" ? "127.0.0.1" : "localhost";

    const moved = await update({ host: otherHost });
    expect(moved.status).toBe(400);
    expect(moved.body).toMatchObject({
      message: "The root password must be provided again when the host or port changes",
    });
    const ported = await update({ port: 1 });
    expect(ported.status).toBe(400);
    const got = expectOk(
      await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) }),
    );
    expect(got.dynamicSecret.inputs).toMatchObject({ host: sqlInputs().host, port: sqlInputs().port });

    // Same place (any spelling the schema normalises to it), or the password given: allowed.
    expect((await update({ host: ` ${sqlInputs().host.toUpperCase()} `, port: sqlInputs().port })).status).toBe(200);
    const withPassword = expectOk(await update({ host: otherHost, password: sqlInputs().password }));
    expect(withPassword.dynamicSecret.inputs).toMatchObject({ host: otherHost });
    expect((await leaseOf(scope, secret.name)).data.DB_USERNAME).toBeTruthy();
  });
});

describe("writes racing a delete answer 404, never 500", () => {
  it("answers 404 when the dynamic secret is deleted between a lease's lookup and its insert", async () => {
    const scope = await createScope();
    const secret = await createTotpSecret(scope);
    // The secret disappears just as the lease intent is written, as a concurrent delete would make it.
    const drop = await withTrigger(
      scope.tenant.app.deps.db,
      "dynamic_secret_leases",
      "before insert",
      `if new.dynamic_secret_id = '${secret.id}' then delete from dynamic_secrets where id = new.dynamic_secret_id; end if; return new;`,
    );
    try {
      const lease = await scope.tenant.admin.dynamicSecretLeases.create({
        body: { ...scopeOf(scope), dynamicSecretName: secret.name },
      });
      expect(lease.status).toBe(404);
      expect(lease.body).toMatchObject({
        message: `Dynamic secret with name '${secret.name}' in folder with path '/' not found`,
      });
    } finally {
      await drop();
    }
  });

  it("answers 404 when an update or a delete finds the row gone", async () => {
    const scope = await createScope();
    const secret = await createTotpSecret(scope);
    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.create({
        body: { ...scopeOf(scope), dynamicSecretName: secret.name },
      }),
    );
    // The row vanishes between the read and the write: the write affects nothing.
    const skip = await withTrigger(
      scope.tenant.app.deps.db,
      "dynamic_secrets",
      "before update",
      `if old.id = '${secret.id}' then return null; end if; return new;`,
    );
    try {
      const update = await scope.tenant.admin.dynamicSecrets.update({
        params: { name: secret.name },
        body: { ...scopeOf(scope), data: { defaultTTL: "2h" } },
      });
      expect(update.status).toBe(404);
      // It has a lease, so the delete marks it Deleting, which also finds nothing.
      const deleted = await scope.tenant.admin.dynamicSecrets.delete({
        params: { name: secret.name },
        body: scopeOf(scope),
      });
      expect(deleted.status).toBe(404);
    } finally {
      await skip();
    }
  });

  it("holds the lease limit under parallel creations", async () => {
    const scope = await createScope();
    const secret = await createTotpSecret(scope);
    const db = scope.tenant.app.deps.db;
    const limit = scope.tenant.app.deps.env.MAX_LEASE_LIMIT;
    await sql`insert into dynamic_secret_leases (id, dynamic_secret_id, external_entity_id, expire_at, state)
      select gen_random_uuid(), ${secret.id}::uuid, 'filler-' || n, now() + interval '1 day', 'active' from generate_series(1, ${limit - 3}) as n`.execute(
      db,
    );
    try {
      const results = await Promise.all(
        Array.from({ length: 12 }, () =>
          scope.tenant.admin.dynamicSecretLeases.create({
            body: { ...scopeOf(scope), dynamicSecretName: secret.name },
          }),
        ),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(3);
      const refused = results.filter((r) => r.status !== 200);
      expect(refused).toHaveLength(9);
      for (const r of refused)
        expect(r.body).toMatchObject({ statusCode: 400, message: `Max lease limit reached. Limit: ${limit}` });
      const { count } = await db
        .selectFrom("dynamic_secret_leases")
        .select((eb) => eb.fn.countAll<string>().as("count"))
        .where("dynamic_secret_id", "=", secret.id)
        .executeTakeFirstOrThrow();
      expect(Number(count)).toBe(limit);
    } finally {
      await db.deleteFrom("dynamic_secret_leases").where("dynamic_secret_id", "=", secret.id).execute();
    }
  });
});
