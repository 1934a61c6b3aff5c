import { DynamicSecretProviders, InfisicalSDK, SqlProviders } from "@infisical/sdk";
import { describe, expect, it } from "vitest";
import { uniqueName } from "../helpers/tenant";
import { canLogin, createScope, roleExists, sqlInputs } from "./helpers";

describe("@infisical/sdk v5 against Keyward", () => {
  it("creates a dynamic secret, leases, renews and revokes real PostgreSQL credentials", async () => {
    const scope = await createScope();
    const sdk = new InfisicalSDK({ siteUrl: scope.tenant.app.baseUrl });
    sdk.auth().accessToken(scope.tenant.adminToken);
    const target = sqlInputs();
    const name = uniqueName("sdk");
    const where = { projectSlug: scope.projectSlug, environmentSlug: "dev", path: "/" };

    const dynamicSecret = await sdk.dynamicSecrets().create({
      ...where,
      name,
      defaultTTL: "10m",
      maxTTL: "1h",
      provider: {
        type: DynamicSecretProviders.SqlDatabase,
        inputs: {
          client: SqlProviders.Postgres,
          host: target.host,
          port: target.port,
          database: target.database,
          username: target.username,
          password: target.password,
          creationStatement: `CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`,
          revocationStatement: `DROP ROLE IF EXISTS "{{username}}";`,
          renewStatement: `ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`,
        },
      },
    });
    expect(dynamicSecret).toMatchObject({ name, type: "sql-database", defaultTTL: "10m", maxTTL: "1h" });

    const created = (await sdk
      .dynamicSecrets()
      .leases.create({ ...where, dynamicSecretName: name, ttl: "5m" })) as unknown as {
      lease: { id: string; expireAt: string };
      data: { DB_USERNAME: string; DB_PASSWORD: string };
    };
    expect(await canLogin(created.data.DB_USERNAME, created.data.DB_PASSWORD)).toBe(true);

    const renewed = (await sdk
      .dynamicSecrets()
      .leases.renew(created.lease.id, { ...where, ttl: "10m" })) as unknown as {
      lease: { expireAt: string };
    };
    expect(new Date(renewed.lease.expireAt).getTime() - new Date(created.lease.expireAt).getTime()).toBe(600_000);

    const deleted = (await sdk.dynamicSecrets().leases.delete(created.lease.id, where)) as unknown as {
      lease: { id: string };
    };
    expect(deleted.lease.id).toBe(created.lease.id);
    expect(await roleExists(created.data.DB_USERNAME)).toBe(false);
    expect(await canLogin(created.data.DB_USERNAME, created.data.DB_PASSWORD)).toBe(false);

    const removed = await sdk.dynamicSecrets().delete(name, where);
    expect(removed).toMatchObject({ name });
  });

  it("surfaces Keyward's errors through the SDK", async () => {
    const scope = await createScope();
    const sdk = new InfisicalSDK({ siteUrl: scope.tenant.app.baseUrl });
    sdk.auth().accessToken(scope.tenant.adminToken);
    await expect(
      sdk
        .dynamicSecrets()
        .leases.create({ projectSlug: scope.projectSlug, environmentSlug: "dev", dynamicSecretName: "missing" }),
    ).rejects.toThrow(/not found/);
  });
});
