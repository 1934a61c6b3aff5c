import { describe, expect, it } from "vitest";
import { sweepOrphanCredentials } from "../../src/modules/dynamic-secrets/orphan-sweeper";
import { getTestApp } from "../helpers/app";
import { expectOk, uniqueName } from "../helpers/tenant";
import { createScope, leaseOf, scopeOf } from "./helpers";
import {
  canLoginToMariadb,
  createProviderSecret,
  mariadbCa,
  mariadbQuery,
  mariadbSession,
  mariadbUrl,
  mariadbUserExists,
  mysqlInputs,
  otherCa,
} from "./provider-targets";

describe("sql-database with the mysql2 client (a real MariaDB, over TLS with a CA)", () => {
  it("creates a user that logs in and reads, and drops it and its sessions on revoke", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, { type: "sql-database", inputs: mysqlInputs() });
    expect(secret.type).toBe("sql-database");
    const got = expectOk(
      await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) }),
    ).dynamicSecret;
    expect(got.inputs).toMatchObject({ client: "mysql2", ca: mariadbCa() });
    expect(got.inputs).not.toHaveProperty("password");
    expect(JSON.stringify(got)).not.toContain(decodeURIComponent(mariadbUrl().password));

    const { lease, data } = await leaseOf(scope, secret.name);
    expect(data.DB_USERNAME).toBe(lease.externalEntityId);
    expect(data.DB_PASSWORD).toHaveLength(48);
    expect(await canLoginToMariadb(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);
    const session = await mariadbSession(data.DB_USERNAME!, data.DB_PASSWORD!);

    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    );
    expect(await mariadbUserExists(data.DB_USERNAME!)).toBe(false);
    expect(await canLoginToMariadb(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(false);
    await expect(session.query("SELECT 1")).rejects.toThrow();
    session.destroy();
  });

  it("runs custom creation, renew and revocation statements with the same templates", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, {
      type: "sql-database",
      inputs: mysqlInputs({
        creationStatement:
          "CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}' ACCOUNT LOCK; " +
          "ALTER USER '{{username}}'@'%' ACCOUNT UNLOCK; GRANT SELECT ON `{{database}}`.* TO '{{username}}'@'%';",
        renewStatement: "ALTER USER '{{username}}'@'%' WITH MAX_USER_CONNECTIONS 7",
        revocationStatement: "DROP USER '{{username}}'@'%'",
      }),
    });
    const { lease, data } = await leaseOf(scope, secret.name, { ttl: "10m" });
    expect(await canLoginToMariadb(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);
    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.renew({
        params: { leaseId: lease.id },
        body: { ...scopeOf(scope), ttl: "5m" },
      }),
    );
    const [limits] = await mariadbQuery<{ max_user_connections: number }>(
      "SELECT max_user_connections FROM mysql.user WHERE User = ?",
      [data.DB_USERNAME],
    );
    expect(Number(limits?.max_user_connections)).toBe(7);
    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    );
    expect(await mariadbUserExists(data.DB_USERNAME!)).toBe(false);
  });

  it("generates passwords to the SDK's passwordRequirements shape", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, {
      type: "sql-database",
      inputs: mysqlInputs({
        passwordRequirements: {
          length: 20,
          required: { minUppercase: 5, minDigits: 5, minSymbols: 2 },
          allowedSymbols: "#%",
        },
      }),
    });
    const { data } = await leaseOf(scope, secret.name);
    const password = data.DB_PASSWORD!;
    expect(password).toHaveLength(20);
    expect(password.replace(/[^A-Z]/g, "").length).toBeGreaterThanOrEqual(5);
    expect(password.replace(/[^0-9]/g, "").length).toBeGreaterThanOrEqual(5);
    expect(password.replace(/[^#%]/g, "").length).toBeGreaterThanOrEqual(2);
    expect(password).toMatch(/^[A-Z0-9#%]+$/);
    expect(await canLoginToMariadb(data.DB_USERNAME!, password)).toBe(true);
  });

  it("refuses a server its CA did not sign, a wrong password, and a login without TLS, with 400", async () => {
    const scope = await createScope();
    const attempt = async (inputs: Record<string, unknown>) =>
      scope.tenant.admin.dynamicSecrets.create({
        body: {
          ...scopeOf(scope),
          name: uniqueName("maria"),
          provider: { type: "sql-database", inputs: mysqlInputs(inputs) as never },
          defaultTTL: "1h",
        },
      });
    for (const inputs of [{ ca: otherCa() }, { password: "wrong-password" }, { ca: undefined }]) {
      const res = await attempt(inputs);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain("Failed to connect with provider");
      expect(JSON.stringify(res.body)).not.toContain(decodeURIComponent(mariadbUrl().password));
    }
  });

  it("takes back a user that has no lease row, and leaves leased ones alone", async () => {
    const app = await getTestApp();
    const scope = await createScope();
    const secret = await createProviderSecret(scope, { type: "sql-database", inputs: mysqlInputs() });
    const kept = await leaseOf(scope, secret.name);
    const prefix = kept.data.DB_USERNAME!.split("_").slice(0, 2).join("_");
    const stray = `${prefix}_${"cd".repeat(16)}`;
    await mariadbQuery(`CREATE USER '${stray}'@'%' IDENTIFIED BY 'stray-password'`);

    expect(await sweepOrphanCredentials(app.deps)).toBeGreaterThanOrEqual(1);
    expect(await mariadbUserExists(stray)).toBe(false);
    expect(await canLoginToMariadb(kept.data.DB_USERNAME!, kept.data.DB_PASSWORD!)).toBe(true);
  });
});

describe("provider types and inputs Keyward does not drive", () => {
  it("answers 400 naming what is supported for the reference's other providers and SQL clients", async () => {
    const scope = await createScope();
    const create = (provider: unknown) =>
      scope.tenant.admin.dynamicSecrets.create({
        body: { ...scopeOf(scope), name: uniqueName("nope"), provider: provider as never, defaultTTL: "1h" },
      });
    for (const client of ["mssql", "oracledb", "sap-ase"]) {
      const res = await create({ type: "sql-database", inputs: { client, host: "db.example.com" } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        message: `SQL client '${client}' is not supported. Supported clients: postgres, mysql2`,
      });
    }
    for (const type of ["aws-iam", "gcp-iam", "azure-entra-id", "mongo-db-atlas", "sap-ase", "cassandra"]) {
      const res = await create({ type, inputs: {} });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(
        `Dynamic secret provider '${type}' is not supported. Supported providers: sql-database (clients postgres, mysql2), redis, rabbit-mq, ldap, totp`,
      );
    }
    expect((await create({ type: "no-such-provider", inputs: {} })).status).toBe(422);
  });

  it("holds generated passwords to at least 12 characters, in either requirements shape", async () => {
    const scope = await createScope();
    const create = (passwordRequirements: unknown) =>
      scope.tenant.admin.dynamicSecrets.create({
        body: {
          ...scopeOf(scope),
          name: uniqueName("pw"),
          provider: { type: "sql-database", inputs: mysqlInputs({ passwordRequirements }) as never },
          defaultTTL: "1h",
        },
      });
    const short = await create({ length: 8, required: { minLowercase: 1 } });
    expect(short.status).toBe(422);
    expect(JSON.stringify(short.body)).toContain("Password length must be at least 12");
    expect((await create({ length: 12, required: { lowercase: 0, uppercase: 0, digits: 0, symbols: 0 } })).status).toBe(
      422,
    );
    expect((await create({ length: 12, required: { minDigits: 13 } })).status).toBe(422);
    const backendShape = await create({ length: 12, required: { lowercase: 4, uppercase: 4, digits: 4, symbols: 0 } });
    expect(backendShape.status).toBe(200);
  });

  it("keeps the SQL client of a secret fixed on update", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, { type: "sql-database", inputs: mysqlInputs() });
    const res = await scope.tenant.admin.dynamicSecrets.update({
      params: { name: secret.name },
      body: { ...scopeOf(scope), data: { inputs: { client: "postgres" } } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: "The client of a dynamic secret cannot be changed" });
  });
});
