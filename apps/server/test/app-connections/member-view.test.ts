import { beforeAll, describe, expect, it } from "vitest";
import { createFolder } from "../helpers/structure";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  uniqueName,
  type TestIdentity,
  type Tenant,
} from "../helpers/tenant";
import { mappingOf, postgresTarget } from "../secret-rotations/helpers";

type Target = Awaited<ReturnType<typeof postgresTarget>>;

let tenant: Tenant;
let target: Target;
let connection: { id: string; name: string };
let member: TestIdentity;

/** Where a connection points and as whom: what only those who may read it see. */
const COORDINATES = ["host", "port", "database", "username"];

beforeAll(async () => {
  tenant = await createTenant();
  target = await postgresTarget();
  connection = expectOk(
    await tenant.admin.appConnections.postgres.create({
      body: { name: uniqueName("shared"), description: "primary", credentials: target.connection },
    }),
  ).appConnection;
  member = await createIdentity(tenant, { orgRole: "member" });
});

describe("an organization member may use the organization's connections, not read where they point", () => {
  it("lists them by name, id, app and method, without coordinates or credentials' hash", async () => {
    const api = member.client.appConnections.postgres;
    for (const answer of [
      expectOk(await api.list({ query: {} })).appConnections,
      expectOk(await member.client.appConnections.listAll({ query: {} })).appConnections,
    ]) {
      const shown = answer.find((c) => c.id === connection.id)!;
      expect(shown).toMatchObject({
        id: connection.id,
        name: connection.name,
        app: "postgres",
        method: "username-and-password",
        orgId: tenant.orgId,
        projectId: null,
        credentials: {},
        credentialsHash: "",
      });
      expect(shown.credentials).toEqual({});
      for (const field of COORDINATES) expect(shown.credentials).not.toHaveProperty(field);
      const text = JSON.stringify(answer);
      for (const value of [target.connection.host, String(target.connection.password)])
        expect(text).not.toContain(value);
    }
    expect(expectOk(await api.available({ query: {} })).appConnections.map((c) => c.id)).toContain(connection.id);
  });

  it("gets one by id or by name redacted the same way (200, credentials empty)", async () => {
    const api = member.client.appConnections.postgres;
    for (const answer of [
      expectOk(await api.get({ params: { connectionId: connection.id } })).appConnection,
      expectOk(await api.getByName({ params: { connectionName: connection.name }, query: {} })).appConnection,
    ]) {
      expect(answer).toMatchObject({ id: connection.id, name: connection.name, credentials: {}, credentialsHash: "" });
      expect(answer.credentials).toEqual({});
      for (const field of COORDINATES) expect(answer.credentials).not.toHaveProperty(field);
    }
  });

  it("still shows the coordinates (never the password) to an admin", async () => {
    const api = tenant.admin.appConnections.postgres;
    for (const answer of [
      expectOk(await api.get({ params: { connectionId: connection.id } })).appConnection,
      expectOk(await api.list({ query: {} })).appConnections.find((c) => c.id === connection.id)!,
    ]) {
      expect(answer.credentials).toMatchObject({
        host: target.connection.host,
        port: target.connection.port,
        database: target.connection.database,
        username: target.connection.username,
      });
      expect(answer.credentials).not.toHaveProperty("password");
      expect(answer.credentialsHash).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("refuses members nothing they could do before: a project member's rotation on the connection is created", async () => {
    const project = await createProject(tenant);
    await createFolder(tenant, project.id, "dev", "/", "db");
    const rotator = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "member" });
    const rotation = expectOk(
      await rotator.client.secretRotations.postgresCredentials.create({
        body: {
          name: uniqueName("rotation"),
          projectId: project.id,
          connectionId: connection.id,
          environment: "dev",
          secretPath: "/db",
          rotationInterval: 1,
          parameters: target.parameters,
          secretsMapping: mappingOf(target, "MEMBER") as { username: string; password: string },
        },
      }),
    ).secretRotation;
    expect(rotation.connectionId).toBe(connection.id);
    // What the member may not do with the connection itself stays refused.
    const update = await member.client.appConnections.postgres.update({
      params: { connectionId: connection.id },
      body: { description: "mine" },
    });
    expect(update.status).toBe(403);
  });

  it("refuses list and get (403) to an organization role that may neither read nor use connections", async () => {
    const nobody = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await nobody.client.appConnections.postgres.list({ query: {} })).status).toBe(403);
    const get = await nobody.client.appConnections.postgres.get({ params: { connectionId: connection.id } });
    expect(get.status).toBe(403);
    expect((get.body as { message: string }).message).toContain("read-app-connections");
  });
});
