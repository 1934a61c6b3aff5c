import { beforeAll, describe, expect, it } from "vitest";
import type { PermissionRule } from "../../src/permissions";
import { createFolder, insertCustomRole } from "../helpers/structure";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  uniqueName,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";
import { insertConnection, postgresTarget } from "./helpers";

/**
 * Deleting a rotation with its secrets (`deleteSecrets=true`) deletes the mapped secrets only when the
 * caller may delete each of them, as the secrets' own delete route decides; otherwise 403 and nothing
 * changes: not the rotation, not the secrets, not the credentials.
 */
let tenant: Tenant;
let projectId: string;

const ROTATION_READ_DELETE: PermissionRule = {
  subject: "secret-rotation",
  action: ["read", "delete"],
  inverted: false,
};
const SECRETS_READ: PermissionRule = {
  subject: "secrets",
  action: ["read", "describeSecret", "readValue"],
  inverted: false,
};

/** A project identity holding exactly `rules` (and the organization's member role, to use its connections). */
const withRules = async (rules: PermissionRule[]) =>
  createIdentity(tenant, {
    orgRole: "member",
    projectId,
    projectRole: await insertCustomRole(tenant, projectId, rules),
  });

beforeAll(async () => {
  tenant = await createTenant();
  projectId = (await createProject(tenant)).id;
});

/** A rotation in a prod folder of its own, created by the admin. */
const createRotation = async () => {
  const target = await postgresTarget();
  const folder = uniqueName("del");
  await createFolder(tenant, projectId, "prod", "/", folder);
  const prefix = folder.replace(/-/g, "_").toUpperCase();
  const secretsMapping = { username: `${prefix}_USERNAME`, password: `${prefix}_PASSWORD` };
  const secretPath = `/${folder}`;
  const rotation = expectOk(
    await tenant.admin.secretRotations.postgresCredentials.create({
      body: {
        name: uniqueName("rotation"),
        projectId,
        connectionId: await insertConnection(tenant.app.deps, tenant.orgId, "postgres", target.connection),
        environment: "prod",
        secretPath,
        rotationInterval: 30,
        parameters: target.parameters,
        secretsMapping,
      },
    }),
  ).secretRotation;
  const read = (name: string) =>
    tenant.admin.secretsV4.get({ params: { secretName: name }, query: { projectId, environment: "prod", secretPath } });
  const credential = async () => ({
    username: expectOk(await read(secretsMapping.username)).secret.secretValue,
    password: expectOk(await read(secretsMapping.password)).secret.secretValue,
  });
  /** Whether each mapped secret still exists. */
  const present = async () =>
    Promise.all([secretsMapping.username, secretsMapping.password].map(async (n) => (await read(n)).status === 200));
  return { target, rotation, secretPath, secretsMapping, credential, present };
};

const deleteAs = (
  who: TestIdentity | Tenant,
  id: string,
  query: { deleteSecrets?: "true" | "false"; revokeGeneratedCredentials?: "true" | "false" },
) =>
  ("admin" in who ? who.admin : who.client).secretRotations.postgresCredentials.delete({
    params: { rotationId: id },
    query,
  });

const stillThere = async (id: string) =>
  (await tenant.admin.secretRotations.postgresCredentials.get({ params: { rotationId: id } })).status === 200;

describe("deleting a rotation with its secrets", () => {
  it("without delete on the secrets: 403 like the secrets' own delete, and nothing changes", async () => {
    const made = await createRotation();
    const caller = await withRules([ROTATION_READ_DELETE, SECRETS_READ]);
    const direct = await caller.client.secretsV4.delete({
      params: { secretName: made.secretsMapping.password },
      body: { projectId, environment: "prod", secretPath: made.secretPath },
    });
    expect(direct.status).toBe(403);
    const before = await made.credential();

    const refused = await deleteAs(caller, made.rotation.id, { deleteSecrets: "true" });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to delete on secrets",
    });
    expect(await stillThere(made.rotation.id)).toBe(true);
    expect(await made.present()).toEqual([true, true]);

    // Revoking the credentials too: refused before any password changes.
    const revoking = await deleteAs(caller, made.rotation.id, {
      deleteSecrets: "true",
      revokeGeneratedCredentials: "true",
    });
    expect(revoking.status).toBe(403);
    expect(await made.target.canLogin(before.username, before.password)).toBe(true);
    expect(await stillThere(made.rotation.id)).toBe(true);
    expect(await made.present()).toEqual([true, true]);

    // Without deleteSecrets the rotation goes and its secrets stay, as ordinary secrets.
    expectOk(await deleteAs(caller, made.rotation.id, { deleteSecrets: "false" }));
    expect(await stillThere(made.rotation.id)).toBe(false);
    expect(await made.present()).toEqual([true, true]);
  });

  it("delete on only some of the secrets (by name or by tag) is not enough", async () => {
    const made = await createRotation();
    const byName = await withRules([
      ROTATION_READ_DELETE,
      SECRETS_READ,
      { subject: "secrets", action: ["delete"], inverted: false, conditions: { secretName: { $glob: "*_USERNAME" } } },
    ]);
    expect((await deleteAs(byName, made.rotation.id, { deleteSecrets: "true" })).status).toBe(403);
    expect(await made.present()).toEqual([true, true]);

    const slug = uniqueName("locked");
    const tag = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug, color: "#ff0000" } }),
    ).tag;
    expectOk(
      await tenant.admin.secretsV4.update({
        params: { secretName: made.secretsMapping.password },
        body: { projectId, environment: "prod", secretPath: made.secretPath, tagIds: [tag.id] },
      }),
    );
    const untagged = await withRules([
      ROTATION_READ_DELETE,
      SECRETS_READ,
      { subject: "secrets", action: ["delete"], inverted: false },
      { subject: "secrets", action: ["delete"], inverted: true, conditions: { secretTags: { $in: [slug] } } },
    ]);
    expect((await deleteAs(untagged, made.rotation.id, { deleteSecrets: "true" })).status).toBe(403);
    expect(await stillThere(made.rotation.id)).toBe(true);
    expect(await made.present()).toEqual([true, true]);
  });

  it("with delete on every mapped secret the rotation and its secrets go", async () => {
    const made = await createRotation();
    const caller = await withRules([
      ROTATION_READ_DELETE,
      SECRETS_READ,
      { subject: "secrets", action: ["delete"], inverted: false, conditions: { environment: "prod" } },
    ]);
    const deleted = expectOk(await deleteAs(caller, made.rotation.id, { deleteSecrets: "true" })).secretRotation;
    expect(deleted.id).toBe(made.rotation.id);
    expect(await stillThere(made.rotation.id)).toBe(false);
    expect(await made.present()).toEqual([false, false]);
  });

  it("403 without delete on the rotation, 404 for another organization's, 400 on another type's route", async () => {
    const made = await createRotation();
    const reader = await withRules([{ subject: "secret-rotation", action: ["read"], inverted: false }, SECRETS_READ]);
    expect((await deleteAs(reader, made.rotation.id, { deleteSecrets: "true" })).status).toBe(403);
    const stranger = await createTenant(tenant.app);
    expect((await deleteAs(stranger, made.rotation.id, { deleteSecrets: "true" })).status).toBe(404);
    const wrongType = await tenant.admin.secretRotations.mysqlCredentials.delete({
      params: { rotationId: made.rotation.id },
      query: { deleteSecrets: "true" } as never,
    });
    expect(wrongType.status).toBe(400);
    expect(await stillThere(made.rotation.id)).toBe(true);
    expect(await made.present()).toEqual([true, true]);
  });
});
