import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { withTrigger } from "../helpers/triggers";

/**
 * Requests racing each other end in one consistent outcome with 2xx/4xx answers, never a 5xx.
 * Each race is repeated: on PostgreSQL these interleavings deadlocked or hit a row deleted under
 * them; on PGlite (one connection) they run one after another and must agree as well.
 */
const ROUNDS = 8;

type Answer = { status: number; body: unknown };

const statusesOf = async (requests: (() => Promise<Answer>)[]) => {
  const answers = await Promise.all(requests.map((send) => send()));
  for (const answer of answers)
    if (answer.status >= 500) throw new Error(`${answer.status}: ${JSON.stringify(answer.body)}`);
  return answers.map((answer) => answer.status);
};

const qaEnvironment = async (tenant: Tenant, projectId: string) =>
  expectOk(
    await tenant.admin.projects.createEnvironment({
      params: { projectId },
      body: { name: "QA", slug: uniqueName("qa") },
    }),
  ).environment;

describe("races end consistently, never in a 5xx", () => {
  it("environment writes racing the environment's or the project's deletion", async () => {
    const tenant = await createTenant();
    for (let round = 0; round < ROUNDS; round += 1) {
      const project = await createProject(tenant);
      const env = await qaEnvironment(tenant, project.id);
      const [updated, deleted] = await statusesOf([
        () =>
          tenant.admin.projects.updateEnvironment({
            params: { projectId: project.id, environmentId: env.id },
            body: { name: "Renamed", position: 1 },
          }),
        () => tenant.admin.projects.deleteEnvironment({ params: { projectId: project.id, environmentId: env.id } }),
      ]);
      expect(deleted).toBe(200);
      expect([200, 404]).toContain(updated);

      const [created, projectDeleted] = await statusesOf([
        () =>
          tenant.admin.projects.createEnvironment({
            params: { projectId: project.id },
            body: { name: "Late", slug: "late" },
          }),
        () => tenant.admin.projects.delete({ params: { projectId: project.id } }),
      ]);
      expect(projectDeleted).toBe(200);
      expect([200, 404]).toContain(created);
    }
  });

  it("parallel environment reorders keep positions 1..n", async () => {
    const tenant = await createTenant();
    for (let round = 0; round < ROUNDS; round += 1) {
      const project = await createProject(tenant);
      const envs = expectOk(
        await tenant.admin.projects.listEnvironments({ params: { projectId: project.id } }),
      ).environments;
      await statusesOf(
        envs.flatMap((env, i) => [
          () =>
            tenant.admin.projects.updateEnvironment({
              params: { projectId: project.id, environmentId: env.id },
              body: { position: envs.length - i },
            }),
          () =>
            tenant.admin.projects.updateEnvironment({
              params: { projectId: project.id, environmentId: env.id },
              body: { position: ((i + 1) % envs.length) + 1 },
            }),
        ]),
      );
      const after = expectOk(
        await tenant.admin.projects.listEnvironments({ params: { projectId: project.id } }),
      ).environments;
      expect(after.map((env) => env.position).sort((a, b) => a - b)).toEqual(envs.map((_, i) => i + 1));
    }
  });

  it("folder creation racing its environment's deletion", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    for (let round = 0; round < ROUNDS; round += 1) {
      const env = await qaEnvironment(tenant, project.id);
      const statuses = await statusesOf([
        ...[0, 1, 2].map(
          (i) => () =>
            tenant.admin.folders.create({
              body: { projectId: project.id, environment: env.slug, path: "/", name: `f${i}` },
            }),
        ),
        () => tenant.admin.projects.deleteEnvironment({ params: { projectId: project.id, environmentId: env.id } }),
      ]);
      expect(statuses.at(-1)).toBe(200);
      for (const status of statuses.slice(0, -1)) expect([200, 404]).toContain(status);
    }
  });

  it("a secret import racing the deletion of the folder holding it", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    expectOk(
      await tenant.admin.folders.create({
        body: { projectId: project.id, environment: "prod", path: "/", name: "source" },
      }),
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      const { folder } = expectOk(
        await tenant.admin.folders.create({
          body: { projectId: project.id, environment: "dev", path: "/", name: `holder-${round}` },
        }),
      );
      const [imported, deleted] = await statusesOf([
        () =>
          tenant.admin.secretImports.create({
            body: {
              projectId: project.id,
              environment: "dev",
              path: `/${folder.name}`,
              import: { environment: "prod", path: "/source" },
            },
          }),
        () =>
          tenant.admin.folders.delete({
            params: { folderIdOrName: folder.id },
            body: { projectId: project.id, environment: "dev", path: "/" },
          }),
      ]);
      expect(deleted).toBe(200);
      expect([200, 404]).toContain(imported);
    }
  });

  it("a gateway's revocation racing its deletion", async () => {
    const tenant = await createTenant();
    for (let round = 0; round < ROUNDS; round += 1) {
      const gateway = expectOk(
        await tenant.admin.gateways.create({ body: { name: uniqueName("gw"), authMethod: { method: "token" } } }),
      );
      const id = (gateway as { id: string }).id;
      expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: id } }));
      const [revoked, deleted] = await statusesOf([
        () => tenant.admin.gateways.revoke({ params: { gatewayId: id } }),
        () => tenant.admin.gateways.delete({ params: { gatewayId: id } }),
      ]);
      expect(deleted).toBe(200);
      expect([200, 404]).toContain(revoked);
    }
  });

  it("groups with one name created in parallel: exactly one", async () => {
    const tenant = await createTenant();
    for (let round = 0; round < 3; round += 1) {
      const name = uniqueName("team");
      const statuses = await statusesOf(
        Array.from({ length: 8 }, (_, i) => () => tenant.admin.groups.create({ body: { name, slug: `${name}-${i}` } })),
      );
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 400)).toHaveLength(7);
    }
  });

  it("Universal Auth logins racing the method's removal answer 200 or 401", async () => {
    const tenant = await createTenant();
    for (let round = 0; round < ROUNDS; round += 1) {
      const identity = await createIdentity(tenant, { orgRole: "member" });
      const { identityUniversalAuth } = expectOk(
        await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }),
      );
      const secret = expectOk(
        await tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
      );
      const login = () =>
        tenant.anonymous.universalAuth.login({
          body: { clientId: identityUniversalAuth.clientId, clientSecret: secret.clientSecret },
        });
      const statuses = await statusesOf([
        login,
        login,
        login,
        () =>
          tenant.admin.universalAuth.revokeClientSecret({
            params: { identityId: identity.id, clientSecretId: secret.clientSecretData.id },
          }),
        () => tenant.admin.universalAuth.revoke({ params: { identityId: identity.id } }),
      ]);
      for (const status of statuses.slice(0, 3)) expect([200, 401]).toContain(status);
      // After the method is gone: 400 "The identity does not have universal auth", as for any caller.
      expect([200, 400, 404]).toContain(statuses[3]);
      expect(statuses[4]).toBe(200);
    }
  });

  it("updates racing the deletion of what they update answer 200 or 404", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    for (let round = 0; round < ROUNDS; round += 1) {
      const { role } = expectOk(
        await tenant.admin.roles.create({
          params: { projectId: project.id },
          body: { slug: uniqueName("r"), name: "R", permissions: [] },
        }),
      );
      const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("g") } }));
      const { projectTemplate } = expectOk(
        await tenant.admin.projectTemplates.create({ body: { name: uniqueName("t"), type: "secret-manager" } }),
      );
      const identity = await createIdentity(tenant);
      const statuses = await statusesOf([
        () =>
          tenant.admin.roles.update({ params: { projectId: project.id, roleId: role.id }, body: { name: "Renamed" } }),
        () => tenant.admin.roles.delete({ params: { projectId: project.id, roleId: role.id } }),
        () => tenant.admin.groups.update({ params: { id: group.id }, body: { name: uniqueName("renamed") } }),
        () => tenant.admin.groups.delete({ params: { id: group.id } }),
        () =>
          tenant.admin.projectTemplates.update({
            params: { templateId: projectTemplate.id },
            body: { description: "changed" },
          }),
        () => tenant.admin.projectTemplates.delete({ params: { templateId: projectTemplate.id } }),
        () => tenant.admin.tokenAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 600 } }),
        () => tenant.admin.tokenAuth.revoke({ params: { identityId: identity.id } }),
      ]);
      for (const i of [0, 2, 4]) expect([200, 404]).toContain(statuses[i]);
      // Updating Token Auth once it is removed: 400 "The identity does not have Token Auth".
      expect([200, 400, 404]).toContain(statuses[6]);
      for (const i of [1, 3, 5, 7]) expect(statuses[i]).toBe(200);
    }
  });

  describe("what PostgreSQL reports for a race reaches the client as a 4xx", () => {
    it("an update whose row is gone by the time it runs answers 404", async () => {
      const tenant = await createTenant();
      const project = await createProject(tenant);
      const { role } = expectOk(
        await tenant.admin.roles.create({
          params: { projectId: project.id },
          body: { slug: uniqueName("r"), name: "R", permissions: [] },
        }),
      );
      // As if a concurrent delete won: the update finds no row to return.
      const drop = await withTrigger(
        tenant.app.deps.db,
        "project_roles",
        "before update",
        `if old.id = '${role.id}' then return null; end if; return new;`,
      );
      try {
        const res = await tenant.admin.roles.update({
          params: { projectId: project.id, roleId: role.id },
          body: { name: "Renamed" },
        });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({
          error: "NotFound",
          message: "The resource was not found: it was deleted while the request was being handled",
        });
      } finally {
        await drop();
      }
    });

    it("a transaction ended as a deadlock victim answers 409 and writes nothing", async () => {
      const tenant = await createTenant();
      const project = await createProject(tenant);
      const { role } = expectOk(
        await tenant.admin.roles.create({
          params: { projectId: project.id },
          body: { slug: uniqueName("r"), name: "R", permissions: [] },
        }),
      );
      const drop = await withTrigger(
        tenant.app.deps.db,
        "project_roles",
        "before update",
        `if old.id = '${role.id}' then raise exception 'deadlock detected' using errcode = '40P01'; end if; return new;`,
      );
      try {
        const res = await tenant.admin.roles.update({
          params: { projectId: project.id, roleId: role.id },
          body: { name: "Renamed" },
        });
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({
          error: "Conflict",
          message: "The request conflicted with a concurrent change and was not applied; please try again",
        });
      } finally {
        await drop();
      }
      expect(
        expectOk(await tenant.admin.roles.get({ params: { projectId: project.id, roleId: role.id } })).role.name,
      ).toBe("R");
    });
  });
});
