import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import mysql from "mysql2/promise";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { up as dropStoredStatements } from "../../src/db/migrations/0037-rotation-statements";
import { queryOneStatement, withMysql, withPostgres } from "../../src/modules/app-connections/app-clients";
import { createFolder } from "../helpers/structure";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  uniqueName,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";
import { targetUrl } from "../dynamic-secrets/helpers";
import { insertConnection, mappingOf, mysqlTarget, postgresTarget } from "./helpers";

/**
 * A custom rotation statement runs as the connection's user: only someone who may edit the connection
 * may set one, it runs as exactly one statement, and its placeholders become quoted values.
 */
let tenant: Tenant;
let projectId: string;
let member: TestIdentity;
let viewer: TestIdentity;

beforeAll(async () => {
  tenant = await createTenant();
  projectId = (await createProject(tenant)).id;
  member = await createIdentity(tenant, { orgRole: "member", projectId, projectRole: "member" });
  viewer = await createIdentity(tenant, { orgRole: "member", projectId, projectRole: "viewer" });
});

const suffix = () => randomBytes(4).toString("hex");

/** Runs statements on the PostgreSQL target as its superuser. */
const onTarget = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
  const admin = new pg.Client({ connectionString: targetUrl().toString() });
  await admin.connect();
  try {
    return (await admin.query<R>(text, values)).rows;
  } finally {
    await admin.end();
  }
};

/** Runs a statement on MariaDB as its root account. */
const onMariadb = async (text: string, values: unknown[] = []) => {
  const url = new URL(process.env.KEYWARD_TEST_MARIADB_URL!);
  const admin = await mysql.createConnection({
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ssl: { ca: process.env.KEYWARD_TEST_MARIADB_CA! },
  });
  try {
    return ((await admin.query(text, values)) as unknown as [Record<string, unknown>[]])[0];
  } finally {
    await admin.end();
  }
};

type Sql = {
  name: string;
  target: typeof postgresTarget | typeof mysqlTarget;
  routes: (t: Tenant | TestIdentity) => Tenant["admin"]["secretRotations"]["postgresCredentials"];
  /** The usual statement of the dialect, with placeholders in quotes. */
  statement: string;
  /** The same with every placeholder standing alone. */
  bare: string;
  /** A statement that would leave a new login behind. */
  injection: (name: string) => string;
  exists: (name: string) => Promise<boolean>;
  /** A user whose name needs quoting, made on the server with `password`. */
  makeOddUser: (name: string) => Promise<void>;
};

const POSTGRES: Sql = {
  name: "PostgreSQL",
  target: postgresTarget,
  routes: (t) => ("admin" in t ? t.admin : t.client).secretRotations.postgresCredentials,
  statement: `ALTER USER "{{username}}" WITH PASSWORD '{{password}}';`,
  bare: "ALTER ROLE {{username}} WITH PASSWORD {{password}}",
  injection: (name) => `ALTER USER "{{username}}" WITH PASSWORD '{{password}}'; CREATE ROLE ${name} NOLOGIN`,
  exists: async (name) => (await onTarget("select 1 from pg_roles where rolname = $1", [name])).length > 0,
  makeOddUser: async (name) => {
    await onTarget(`create role ${pg.escapeIdentifier(name)} login password 'initial-${suffix()}'`);
  },
};

const MARIADB: Sql = {
  name: "MariaDB",
  target: mysqlTarget,
  // The two SQL kinds share one route shape.
  routes: (t) => ("admin" in t ? t.admin : t.client).secretRotations.mysqlCredentials,
  statement: "ALTER USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'",
  bare: "ALTER USER {{username}}@'%' IDENTIFIED BY {{password}};",
  injection: (name) => `ALTER USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'; CREATE USER '${name}'@'%'`,
  exists: async (name) => (await onMariadb("select 1 from mysql.user where User = ?", [name])).length > 0,
  makeOddUser: async (name) => {
    await onMariadb("create user ?@'%' identified by ?", [name, `initial-${suffix()}`]);
    // A rotated user logs in to the connection's database to be checked.
    const database = new URL(process.env.KEYWARD_TEST_MARIADB_URL!).pathname.slice(1) || "keyward";
    await onMariadb(`grant select on ${mysql.escapeId(database)}.* to ?@'%'`, [name]);
  },
};

/** A rotation's create body in a folder of its own over a new organization connection of `target`. */
const bodyFor = async (target: Awaited<ReturnType<Sql["target"]>>, parameters: Record<string, unknown> = {}) => {
  const folder = uniqueName("stmt");
  await createFolder(tenant, projectId, "dev", "/", folder);
  const connectionId = await insertConnection(tenant.app.deps, tenant.orgId, target.app, target.connection);
  return {
    name: uniqueName("rotation"),
    projectId,
    connectionId,
    environment: "dev",
    secretPath: `/${folder}`,
    rotationInterval: 30,
    parameters: { ...target.parameters, ...parameters },
    secretsMapping: mappingOf(target, folder.replace(/-/g, "_").toUpperCase()),
  };
};

const folderRotations = async (secretPath: string) =>
  expectOk(await tenant.admin.secretRotations.listAll({ query: { projectId } })).secretRotations.filter(
    (r) => r.folder.path === secretPath,
  );

const mappedValue = async (body: Awaited<ReturnType<typeof bodyFor>>, field: string) =>
  expectOk(
    await tenant.admin.secretsV4.get({
      params: { secretName: body.secretsMapping[field]! },
      query: { projectId, environment: "dev", secretPath: body.secretPath },
    }),
  ).secret.secretValue;

describe.each([POSTGRES, MARIADB])("$name custom rotation statements", (sql) => {
  it("a project member may not set one on the organization's connection: 403, nothing runs; without one they rotate", async () => {
    const target = await sql.target();
    const injected = `kw_injected_${suffix()}`;
    const body = await bodyFor(target, { rotationStatement: sql.injection(injected) });
    const refused = await sql.routes(member).create({ body: body as never });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: "PermissionDenied",
      message: expect.stringMatching(/custom rotation statement .* needs permission to edit that connection/),
    });
    expect(await sql.exists(injected)).toBe(false);
    expect(await folderRotations(body.secretPath)).toEqual([]);

    // Any statement at all, even a harmless one.
    const harmless = await sql.routes(member).create({
      body: {
        ...body,
        name: uniqueName("rotation"),
        parameters: { ...body.parameters, rotationStatement: sql.statement },
      } as never,
    });
    expect(harmless.status).toBe(403);
    expect((await sql.routes(viewer).create({ body: body as never })).status).toBe(403);

    const plain = expectOk(
      await sql.routes(member).create({ body: { ...body, parameters: target.parameters } as never }),
    ).secretRotation;
    expect(plain.parameters).not.toHaveProperty("rotationStatement");
    expect(await target.canLogin(await mappedValue(body, "username"), await mappedValue(body, "password"))).toBe(true);
  });

  it("from someone who may edit the connection, it runs as exactly one statement with its values quoted", async () => {
    const target = await sql.target();
    const injected = `kw_injected_${suffix()}`;
    const body = await bodyFor(target, { rotationStatement: sql.injection(injected) });
    const several = await sql.routes(tenant).create({ body: body as never });
    expect(several.status).toBe(400);
    expect(several.body).toMatchObject({ message: "The rotation statement must be a single SQL statement" });
    expect(await sql.exists(injected)).toBe(false);
    expect(await folderRotations(body.secretPath)).toEqual([]);

    const refusals: [string, string | RegExp][] = [
      [`${sql.statement.replace(/;$/, "")} {{foo}}`, "Invalid expression detected in rotation statement"],
      [
        sql.statement.replace("{{password}}", "secret"),
        "The rotation statement must contain {{username}} and {{password}}",
      ],
      [`${sql.statement.replace(/;$/, "")} -- note`, "The rotation statement may not contain comments"],
      [sql.statement.replace("'{{password}}'", "'x{{password}}'"), /must stand on its own/],
      [sql.statement.replace(/'$|';$/, ""), "The rotation statement has an unterminated quoted name or string"],
    ];
    for (const [statement, message] of refusals) {
      const answer = await sql.routes(tenant).create({
        body: { ...body, parameters: { ...body.parameters, rotationStatement: statement } } as never,
      });
      expect(answer.status, statement).toBe(400);
      expect((answer.body as { message: string }).message).toMatch(message);
    }

    const done = expectOk(
      await sql.routes(tenant).create({
        body: { ...body, parameters: { ...body.parameters, rotationStatement: sql.statement } } as never,
      }),
    ).secretRotation;
    expect(done.parameters.rotationStatement).toBe(sql.statement);
    expect(await target.canLogin(await mappedValue(body, "username"), await mappedValue(body, "password"))).toBe(true);

    // Names that need quoting: a placeholder standing alone becomes a quoted name or string.
    const odd = [`rot "q'x; a_${suffix()}`, `rot "q'x; b_${suffix()}`];
    for (const name of odd) await sql.makeOddUser(name);
    const oddBody = await bodyFor(target, { username1: odd[0], username2: odd[1], rotationStatement: sql.bare });
    const oddRotation = expectOk(await sql.routes(tenant).create({ body: oddBody as never })).secretRotation;
    expect(await mappedValue(oddBody, "username")).toBe(odd[0]);
    expect(await target.canLogin(odd[0]!, await mappedValue(oddBody, "password"))).toBe(true);
    expectOk(await sql.routes(tenant).rotate({ params: { rotationId: oddRotation.id } }));
    expect(await target.canLogin(odd[1]!, await mappedValue(oddBody, "password"))).toBe(true);
  });

  it("a stored statement of several statements is never run as several", async () => {
    const target = await sql.target();
    const body = await bodyFor(target);
    const rotation = expectOk(await sql.routes(tenant).create({ body: body as never })).secretRotation;
    const injected = `kw_injected_${suffix()}`;
    await tenant.app.deps.db
      .updateTable("secret_rotations")
      .set({ parameters: JSON.stringify({ ...target.parameters, rotationStatement: sql.injection(injected) }) })
      .where("id", "=", rotation.id)
      .execute();
    const failed = await sql.routes(tenant).rotate({ params: { rotationId: rotation.id } });
    expect(failed.status).toBe(400);
    expect(await sql.exists(injected)).toBe(false);
  });
});

describe("custom rotation statements", () => {
  it("a project's own connection: the project's edit-app-connections decides", async () => {
    const target = await postgresTarget();
    const body = await bodyFor(target, { rotationStatement: POSTGRES.statement });
    body.connectionId = await insertConnection(tenant.app.deps, tenant.orgId, "postgres", target.connection, projectId);
    expect((await POSTGRES.routes(member).create({ body: body as never })).status).toBe(403);
    expectOk(await POSTGRES.routes(tenant).create({ body: body as never }));
  });

  it("the server's connections refuse a text of two statements, whatever the statement check says", async () => {
    const target = await postgresTarget();
    const injected = `kw_injected_${suffix()}`;
    await expect(
      withPostgres(tenant.app.deps, target.connection, (client) =>
        queryOneStatement(client, `select 1; create role ${injected} nologin`),
      ),
    ).rejects.toThrow(/multiple commands/);
    expect(await POSTGRES.exists(injected)).toBe(false);
    const maria = await mysqlTarget();
    await expect(
      withMysql(tenant.app.deps, maria.connection, (client) => client.query(`select 1; create user '${injected}'@'%'`)),
    ).rejects.toThrow(/SQL syntax/);
    expect(await MARIADB.exists(injected)).toBe(false);
  });

  it("statements stored before the edit check are dropped: those rotations use the server's statement", async () => {
    const target = await postgresTarget();
    const body = await bodyFor(target, { rotationStatement: POSTGRES.statement });
    const rotation = expectOk(await POSTGRES.routes(tenant).create({ body: body as never })).secretRotation;
    await dropStoredStatements(tenant.app.deps.db as unknown as Kysely<unknown>);
    const after = expectOk(await POSTGRES.routes(tenant).get({ params: { rotationId: rotation.id } })).secretRotation;
    expect(after.parameters).toEqual(target.parameters);
    expectOk(await POSTGRES.routes(tenant).rotate({ params: { rotationId: rotation.id } }));
    expect(await target.canLogin(target.parameters.username2, await mappedValue(body, "password"))).toBe(true);
  });
});
