import { beforeAll, describe, expect, it } from "vitest";
import { eventData, isEvent, openEventStream } from "../helpers/event-stream";
import { createFolder } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import {
  insertConnection,
  ldapTarget,
  mappingOf,
  mysqlTarget,
  postgresTarget,
  redisTarget,
  routesOf,
  type Target,
} from "./helpers";

let tenant: Tenant;
let projectId: string;

beforeAll(async () => {
  tenant = await createTenant();
  projectId = (await createProject(tenant)).id;
});

/** A rotation of `target` in a folder of its own, created through the API. */
const createRotation = async (target: Target, overrides: Record<string, unknown> = {}) => {
  const folder = uniqueName("rot");
  await createFolder(tenant, projectId, "dev", "/", folder);
  const connectionId = await insertConnection(tenant.app.deps, tenant.orgId, target.app, target.connection);
  const prefix = folder.replace(/-/g, "_").toUpperCase();
  const body = {
    name: uniqueName("rotation"),
    projectId,
    connectionId,
    environment: "dev",
    secretPath: `/${folder}`,
    rotationInterval: 30,
    parameters: target.parameters,
    secretsMapping: mappingOf(target, prefix),
    ...overrides,
  };
  const response = await routesOf(tenant, target).create({ body: body as never });
  return { response, body, connectionId, secretPath: `/${folder}`, mapping: body.secretsMapping };
};

const readSecret = async (secretPath: string, name: string) =>
  expectOk(
    await tenant.admin.secretsV4.get({
      params: { secretName: name },
      query: { projectId, environment: "dev", secretPath },
    }),
  ).secret;

const mapped = async (created: Awaited<ReturnType<typeof createRotation>>) => {
  const [userField, passwordField] = Object.keys(created.mapping) as [string, string];
  const user = await readSecret(created.secretPath, created.mapping[userField]!);
  const password = await readSecret(created.secretPath, created.mapping[passwordField]!);
  return { username: user.secretValue, password: password.secretValue, version: password.version };
};

const TARGETS: [string, () => Promise<Target>][] = [
  ["PostgreSQL", () => postgresTarget()],
  ["MariaDB", () => mysqlTarget()],
  ["Redis", () => redisTarget()],
  ["OpenLDAP", () => ldapTarget()],
];

describe.each(TARGETS)("%s credentials rotation", (_name, makeTarget) => {
  it("two credentials take turns: the new one logs in, the previous one still does, the one before no longer", async () => {
    const target = await makeTarget();
    const created = await createRotation(target);
    const rotation = expectOk(created.response).secretRotation;
    expect(rotation).toMatchObject({
      activeIndex: 0,
      rotationStatus: "success",
      type: target.type,
      isAutoRotationEnabled: true,
    });
    expect(rotation.nextRotationAt).not.toBeNull();
    const routes = routesOf(tenant, target);
    const first = await mapped(created);
    expect(await target.canLogin(first.username, first.password)).toBe(true);
    const generated = expectOk(await routes.generatedCredentials({ params: { rotationId: rotation.id } }));
    expect(generated.generatedCredentials).toHaveLength(2);
    expect(generated.activeIndex).toBe(0);

    const once = expectOk(await routes.rotate({ params: { rotationId: rotation.id } })).secretRotation;
    expect(once).toMatchObject({ activeIndex: 1, rotationStatus: "success", isLastRotationManual: true });
    const second = await mapped(created);
    expect(second.password).not.toBe(first.password);
    expect(second.version).toBe(first.version + 1);
    expect(await target.canLogin(second.username, second.password)).toBe(true);
    expect(await target.canLogin(first.username, first.password)).toBe(true);

    expectOk(await routes.rotate({ params: { rotationId: rotation.id } }));
    const third = await mapped(created);
    expect(await target.canLogin(third.username, third.password)).toBe(true);
    expect(await target.canLogin(second.username, second.password)).toBe(true);
    expect(await target.canLogin(first.username, first.password)).toBe(false);
  });
});

describe("secret rotations through the API", () => {
  it("a rotation's secret change reaches the project events stream", async () => {
    const target = await postgresTarget();
    const created = await createRotation(target);
    const rotation = expectOk(created.response).secretRotation;
    const stream = await openEventStream(tenant.app.baseUrl, tenant.adminToken, {
      projectId,
      register: [{ event: "secret:update", conditions: { environmentSlug: "dev", secretPath: created.secretPath } }],
    });
    try {
      expectOk(await routesOf(tenant, target).rotate({ params: { rotationId: rotation.id } }));
      const event = await stream.next(isEvent);
      expect(eventData(event).data.payload).toEqual(
        expect.arrayContaining([expect.objectContaining({ secretKey: created.mapping.password })]),
      );
      expect(stream.raw()).not.toContain((await mapped(created)).password);
    } finally {
      stream.close();
    }
  });

  it("lists, gets by id and name, updates the schedule and deletes with its secrets and credentials revoked", async () => {
    const target = await postgresTarget();
    const created = await createRotation(target);
    const rotation = expectOk(created.response).secretRotation;
    const routes = routesOf(tenant, target);
    const listed = expectOk(await routes.list({ query: { projectId } })).secretRotations;
    expect(listed.map((r) => r.id)).toContain(rotation.id);
    expect(
      expectOk(await tenant.admin.secretRotations.listAll({ query: { projectId } })).secretRotations.map((r) => r.id),
    ).toContain(rotation.id);
    expect(expectOk(await routes.get({ params: { rotationId: rotation.id } })).secretRotation.folder.path).toBe(
      created.secretPath,
    );
    expect(
      expectOk(
        await routes.getByName({
          params: { rotationName: rotation.name },
          query: { projectId, environment: "dev", secretPath: created.secretPath },
        }),
      ).secretRotation.id,
    ).toBe(rotation.id);
    const updated = expectOk(
      await routes.update({
        params: { rotationId: rotation.id },
        body: { isAutoRotationEnabled: false, description: "quarterly" },
      }),
    ).secretRotation;
    expect(updated).toMatchObject({ isAutoRotationEnabled: false, nextRotationAt: null, description: "quarterly" });
    const before = await mapped(created);
    expectOk(
      await routes.delete({
        params: { rotationId: rotation.id },
        query: { deleteSecrets: "true", revokeGeneratedCredentials: "true" },
      }),
    );
    expect(await target.canLogin(before.username, before.password)).toBe(false);
    const gone = await tenant.admin.secretsV4.get({
      params: { secretName: created.mapping.password! },
      query: { projectId, environment: "dev", secretPath: created.secretPath },
    });
    expect(gone.status).toBe(404);
    expect((await routes.get({ params: { rotationId: rotation.id } })).status).toBe(404);
  });

  it("refuses what cannot work at create, and leaves nothing behind", async () => {
    const target = await postgresTarget();
    const missing = await createRotation(target, {
      parameters: { username1: target.parameters.username1, username2: "nobody_here" },
    });
    expect(missing.response.status).toBe(400);
    expect(JSON.stringify(missing.response.body)).toContain("nobody_here");

    const weak = await postgresTarget({ weak: true });
    const refused = await createRotation(weak);
    expect(refused.response.status).toBe(400);
    expect(JSON.stringify(refused.response.body)).toMatch(/may not change the users' passwords/);

    const unreachable = { ...target, connection: { ...target.connection, port: 1 } };
    const down = await createRotation(unreachable);
    expect(down.response.status).toBe(400);
    expect(
      expectOk(await tenant.admin.secretRotations.listAll({ query: { projectId } })).secretRotations.map(
        (r) => r.folder.path,
      ),
    ).not.toContain(down.secretPath);

    // A mapped name that already exists in the folder.
    const folder = uniqueName("taken");
    await createFolder(tenant, projectId, "dev", "/", folder);
    expectOk(
      await tenant.admin.secretsV4.create({
        params: { secretName: "TAKEN_PASSWORD" },
        body: { projectId, environment: "dev", secretPath: `/${folder}`, secretValue: "x" },
      }),
    );
    const connectionId = await insertConnection(tenant.app.deps, tenant.orgId, "postgres", target.connection);
    const taken = await tenant.admin.secretRotations.postgresCredentials.create({
      body: {
        name: uniqueName("rotation"),
        projectId,
        connectionId,
        environment: "dev",
        secretPath: `/${folder}`,
        rotationInterval: 1,
        parameters: target.parameters,
        secretsMapping: { username: "TAKEN_USERNAME", password: "TAKEN_PASSWORD" },
      },
    });
    expect(taken.status).toBe(400);
    expect(JSON.stringify(taken.body)).toContain("TAKEN_PASSWORD");
    const duplicate = await tenant.admin.secretRotations.postgresCredentials.create({
      body: {
        name: uniqueName("rotation"),
        projectId,
        connectionId,
        environment: "dev",
        secretPath: `/${folder}`,
        rotationInterval: 1,
        parameters: target.parameters,
        secretsMapping: { username: "SAME", password: "SAME" },
      },
    });
    expect(duplicate.status).toBe(400);
  });

  it("404 for another organization's connection or rotation, 400 on another type's route, 403 without permission", async () => {
    const target = await postgresTarget();
    const created = await createRotation(target);
    const rotation = expectOk(created.response).secretRotation;
    const stranger = await createTenant(tenant.app);
    const foreignConnection = await insertConnection(tenant.app.deps, stranger.orgId, "postgres", target.connection);
    const foreign = await createRotation(await postgresTarget(), { connectionId: foreignConnection });
    expect(foreign.response.status).toBe(404);
    expect(
      (await stranger.admin.secretRotations.postgresCredentials.get({ params: { rotationId: rotation.id } })).status,
    ).toBe(404);
    expect(
      (await tenant.admin.secretRotations.mysqlCredentials.get({ params: { rotationId: rotation.id } })).status,
    ).toBe(400);
    const none = await createIdentity(tenant, { projectId, projectRole: "no-access" });
    expect((await none.client.secretRotations.postgresCredentials.list({ query: { projectId } })).status).toBe(403);
    expect(
      (await none.client.secretRotations.postgresCredentials.get({ params: { rotationId: rotation.id } })).status,
    ).toBe(403);
    const viewer = await createIdentity(tenant, { projectId, projectRole: "viewer" });
    expect(
      (await viewer.client.secretRotations.postgresCredentials.rotate({ params: { rotationId: rotation.id } })).status,
    ).toBe(403);
    expect(
      (
        await viewer.client.secretRotations.postgresCredentials.generatedCredentials({
          params: { rotationId: rotation.id },
        })
      ).status,
    ).toBe(403);
  });
});
