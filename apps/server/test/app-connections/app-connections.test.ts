import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { withPostgres } from "../../src/modules/app-connections/app-clients";
import { sealConnectionCredentials } from "../../src/modules/app-connections/app-connection.credentials";
import { openConnectionById } from "../../src/modules/app-connections/app-connection.service";
import { SHOWN_CREDENTIALS } from "../../src/modules/app-connections/app-connection.types";
import { targetUrl } from "../dynamic-secrets/helpers";
import { createFolder } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import {
  ldapTarget,
  mappingOf,
  mysqlTarget,
  postgresTarget,
  redisTarget,
  type Target,
} from "../secret-rotations/helpers";

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant();
});

const routes = (target: Target, who: Tenant = tenant) =>
  who.admin.appConnections[target.app] as typeof tenant.admin.appConnections.postgres;

const storedRow = (id: string) =>
  tenant.app.deps.db.selectFrom("app_connections").selectAll().where("id", "=", id).executeTakeFirst();

const TARGETS: [string, () => Promise<Target>][] = [
  ["PostgreSQL", () => postgresTarget()],
  ["MariaDB", () => mysqlTarget()],
  ["Redis", () => redisTarget()],
  ["OpenLDAP", () => ldapTarget()],
];

describe.each(TARGETS)("%s app connections", (_label, makeTarget) => {
  it("create, list, get, get by name, update and delete, the password never answered nor stored in clear", async () => {
    const target = await makeTarget();
    const api = routes(target);
    const name = uniqueName("conn");
    const created = expectOk(
      await api.create({ body: { name, credentials: target.connection } as never }),
    ).appConnection;
    expect(created).toMatchObject({
      name,
      app: target.app,
      orgId: tenant.orgId,
      projectId: null,
      isPlatformManagedCredentials: false,
    });
    expect(created.credentials).not.toHaveProperty("password");
    const password = String(target.connection.password);
    expect((await storedRow(created.id))!.encrypted_credentials).not.toContain(password);
    const answers = [
      await api.list({ query: {} }),
      await api.available({ query: {} }),
      await api.get({ params: { connectionId: created.id } }),
      await api.getByName({ params: { connectionName: name }, query: {} }),
      await tenant.admin.appConnections.listAll({ query: {} }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(JSON.stringify(answer.body)).not.toContain(password);
    }
    expect(JSON.stringify(answers[0]!.body)).toContain(created.id);
    const updated = expectOk(
      await api.update({
        params: { connectionId: created.id },
        body: { description: "primary", credentials: target.connection } as never,
      }),
    ).appConnection;
    expect(updated).toMatchObject({ description: "primary", version: created.version + 1 });
    expect(expectOk(await api.delete({ params: { connectionId: created.id } })).appConnection.id).toBe(created.id);
    expect((await api.get({ params: { connectionId: created.id } })).status).toBe(404);
  });

  it("answers only the fields its app allows, even for a secret the stored credentials hold beyond them", async () => {
    const target = await makeTarget();
    const api = routes(target);
    const created = expectOk(
      await api.create({ body: { name: uniqueName("shown"), credentials: target.connection } as never }),
    ).appConnection;
    const allowed: readonly string[] = SHOWN_CREDENTIALS[target.app];
    const expected = Object.keys(target.connection).filter((field) => allowed.includes(field));
    expect(Object.keys(created.credentials).sort()).toEqual(expected.sort());
    // A field the answer does not know (as a new app's token or key would be) is never shown.
    const extra = `extra-${randomBytes(8).toString("hex")}`;
    await tenant.app.deps.db
      .updateTable("app_connections")
      .set({
        encrypted_credentials: sealConnectionCredentials(tenant.app.deps, created.id, {
          ...target.connection,
          clientSecret: extra,
        }),
      })
      .where("id", "=", created.id)
      .execute();
    const read = await api.get({ params: { connectionId: created.id } });
    expect(Object.keys(expectOk(read).appConnection.credentials).sort()).toEqual(expected.sort());
    expect(JSON.stringify(read.body)).not.toContain(extra);
    expect(JSON.stringify(read.body)).not.toContain(String(target.connection.password));
  });
});

describe("app connections refuse what cannot work", () => {
  it("an unreachable host or a wrong password is a 400 with the cause, the password masked, and nothing stored", async () => {
    const target = await postgresTarget();
    const api = routes(target);
    const down = await api.create({
      body: { name: uniqueName("down"), credentials: { ...target.connection, port: 1 } },
    });
    expect(down.status).toBe(400);
    expect(JSON.stringify(down.body)).toMatch(/Unable to validate connection/);
    const wrong = `wrong-${randomBytes(6).toString("hex")}`;
    const refused = await api.create({
      body: { name: uniqueName("wrong"), credentials: { ...target.connection, password: wrong } },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).not.toContain(wrong);
    const names = expectOk(await api.list({ query: {} })).appConnections.map((c) => c.name);
    expect(names.filter((n) => n.startsWith("down-") || n.startsWith("wrong-"))).toEqual([]);
  });

  it("a name taken is a 400; another organization's connection is a 404; a caller without the right gets 403", async () => {
    const target = await redisTarget();
    const api = routes(target);
    const name = uniqueName("taken");
    const created = expectOk(await api.create({ body: { name, credentials: target.connection } })).appConnection;
    const again = await api.create({ body: { name, credentials: target.connection } });
    expect(again.status).toBe(400);
    expect((again.body as { message: string }).message).toBe(
      `An App Connection with the name "${name}" already exists`,
    );
    const stranger = await createTenant(tenant.app);
    expect((await routes(target, stranger).get({ params: { connectionId: created.id } })).status).toBe(404);
    expect((await routes(target, stranger).delete({ params: { connectionId: created.id } })).status).toBe(404);
    expect((await tenant.admin.appConnections.postgres.get({ params: { connectionId: created.id } })).status).toBe(400);
    const gateway = await api.create({
      body: { name: uniqueName("gw"), credentials: target.connection, gatewayId: randomUUID() },
    });
    expect(gateway.status).toBe(400);
    expect((gateway.body as { message: string }).message).toBe("Gateways are not supported for app connections yet");
    const nobody = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await nobody.client.appConnections.redis.list({ query: {} })).status).toBe(403);
    // In an organization with no connection at all the refusal is the same, so it says nothing about how many exist.
    const nobodyElsewhere = await createIdentity(stranger, { orgRole: "no-access" });
    expect((await nobodyElsewhere.client.appConnections.ldap.list({ query: {} })).status).toBe(403);
    expect((await nobody.client.appConnections.redis.get({ params: { connectionId: created.id } })).status).toBe(403);
    const member = await createIdentity(tenant, { orgRole: "member" });
    expect((await member.client.appConnections.redis.get({ params: { connectionId: created.id } })).status).toBe(200);
    expect(
      (
        await member.client.appConnections.redis.create({
          body: { name: uniqueName("m"), credentials: target.connection },
        })
      ).status,
    ).toBe(403);
    expect((await member.client.appConnections.redis.delete({ params: { connectionId: created.id } })).status).toBe(
      403,
    );
  });

  it("a project's connection is that project's: used from another project it is a 400", async () => {
    const target = await postgresTarget();
    const project = await createProject(tenant);
    const other = await createProject(tenant);
    const created = expectOk(
      await routes(target).create({
        body: { name: uniqueName("p"), credentials: target.connection, projectId: project.id },
      }),
    ).appConnection;
    expect(created.projectId).toBe(project.id);
    expect(
      expectOk(await routes(target).list({ query: { projectId: project.id } })).appConnections.map((c) => c.id),
    ).toEqual([created.id]);
    await createFolder(tenant, other.id, "dev", "/", "db");
    const used = await tenant.admin.secretRotations.postgresCredentials.create({
      body: {
        name: "elsewhere",
        projectId: other.id,
        connectionId: created.id,
        environment: "dev",
        secretPath: "/db",
        rotationInterval: 1,
        parameters: target.parameters,
        secretsMapping: mappingOf(target, "ELSEWHERE") as { username: string; password: string },
      },
    });
    expect(used.status).toBe(400);
    expect(JSON.stringify(used.body)).toContain("You cannot connect project App Connection");
  });

  it("a connection a rotation uses cannot be deleted", async () => {
    const target = await postgresTarget();
    const project = await createProject(tenant);
    await createFolder(tenant, project.id, "dev", "/", "db");
    const connection = expectOk(
      await routes(target).create({ body: { name: uniqueName("used"), credentials: target.connection } }),
    ).appConnection;
    expectOk(
      await tenant.admin.secretRotations.postgresCredentials.create({
        body: {
          name: "in-use",
          projectId: project.id,
          connectionId: connection.id,
          environment: "dev",
          secretPath: "/db",
          rotationInterval: 1,
          parameters: target.parameters,
          secretsMapping: { username: "IN_USE_USER", password: "IN_USE_PASSWORD" },
        },
      }),
    );
    const refused = await routes(target).delete({ params: { connectionId: connection.id } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("Cannot delete App Connection with existing connections");
  });

  it("platform-managed credentials: the connection's user gets a password only Keyward knows", async () => {
    const url = targetUrl();
    const user = `managed_${randomBytes(4).toString("hex")}`;
    const initial = `initial-${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    await admin.query(`create role ${user} login password '${initial}'`);
    await admin.end();
    const credentials = {
      host: url.hostname,
      port: Number(url.port),
      database: "postgres",
      username: user,
      password: initial,
      sslEnabled: false,
      sslRejectUnauthorized: false,
    };
    const created = expectOk(
      await tenant.admin.appConnections.postgres.create({
        body: { name: uniqueName("managed"), credentials, isPlatformManagedCredentials: true },
      }),
    ).appConnection;
    expect(created.isPlatformManagedCredentials).toBe(true);
    const old = new pg.Client({
      host: url.hostname,
      port: Number(url.port),
      database: "postgres",
      user,
      password: initial,
    });
    await expect(old.connect()).rejects.toThrow();
    await old.end().catch(() => undefined);
    // The password Keyward set is the one it stored: the connection still logs in with it.
    const opened = await openConnectionById(tenant.app.deps, created.id);
    if (opened?.app !== "postgres") throw new Error("the managed connection should open as postgres");
    expect(opened.credentials.password).toMatch(/^[A-Za-z0-9]{32}$/);
    const one = await withPostgres(tenant.app.deps, opened.credentials, (c) => c.query("select 1 as one"));
    expect(one.rows).toEqual([{ one: 1 }]);
    const change = await tenant.admin.appConnections.postgres.update({
      params: { connectionId: created.id },
      body: { credentials },
    });
    expect(change.status).toBe(400);
    expect(JSON.stringify(change.body)).toContain(
      "Cannot update credentials or management status for platform managed connections",
    );
  });
});
