import { DynamicSecretProviders, InfisicalSDK, SqlProviders } from "@infisical/sdk";
import { describe, expect, it } from "vitest";
import { uniqueName } from "../helpers/tenant";
import { canLogin, createScope, roleExists, sqlInputs } from "./helpers";
import {
  canBindToLdap,
  canLoginToMariadb,
  canLoginToRabbit,
  ldapInputs,
  leaseDn,
  mysqlInputs,
  rabbitInputs,
} from "./provider-targets";

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

  it("creates MariaDB, RabbitMQ and LDAP dynamic secrets with the SDK's types and leases working credentials", async () => {
    const scope = await createScope();
    const sdk = new InfisicalSDK({ siteUrl: scope.tenant.app.baseUrl });
    sdk.auth().accessToken(scope.tenant.adminToken);
    const where = { projectSlug: scope.projectSlug, environmentSlug: "dev", path: "/" };
    const maria = mysqlInputs();
    const rabbit = rabbitInputs();
    const ldap = ldapInputs();
    const providers = [
      {
        type: DynamicSecretProviders.SqlDatabase as const,
        inputs: {
          ...maria,
          client: SqlProviders.MySQL,
          creationStatement:
            "CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'; GRANT SELECT ON `{{database}}`.* TO '{{username}}'@'%';",
          revocationStatement: "DROP USER IF EXISTS '{{username}}'@'%';",
          passwordRequirements: { length: 24, required: { minUppercase: 2, minLowercase: 2, minDigits: 2 } },
        },
      },
      { type: DynamicSecretProviders.RabbitMq as const, inputs: rabbit },
      {
        type: DynamicSecretProviders.Ldap as const,
        // The SDK does not export its LdapCredentialType enum; "dynamic" is its value.
        inputs: { ...ldap, credentialType: "dynamic" as never },
      },
    ];
    const data: Record<string, string>[] = [];
    for (const provider of providers) {
      const name = uniqueName("sdk");
      await sdk.dynamicSecrets().create({ ...where, name, defaultTTL: "10m", maxTTL: "1h", provider });
      const created = (await sdk.dynamicSecrets().leases.create({ ...where, dynamicSecretName: name })) as unknown as {
        data: Record<string, string>;
      };
      data.push(created.data);
    }
    const [mariaData, rabbitData, ldapData] = data as [
      Record<string, string>,
      Record<string, string>,
      Record<string, string>,
    ];
    expect(mariaData.DB_PASSWORD).toHaveLength(24);
    expect(await canLoginToMariadb(mariaData.DB_USERNAME!, mariaData.DB_PASSWORD!)).toBe(true);
    expect(await canLoginToRabbit(rabbitData.DB_USERNAME!, rabbitData.DB_PASSWORD!)).toBe(true);
    expect(await canBindToLdap(leaseDn(ldapData.USERNAME!), ldapData.PASSWORD!)).toBe(true);
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
