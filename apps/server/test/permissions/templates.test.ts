import { describe, expect, it } from "vitest";
import { AUDIENCE, issuer, providerToken } from "../auth-methods/helpers";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  uniqueName,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";
import { grant, type RuleInput } from "./helpers";

/** A custom role holding `permissions` in the tenant's project. */
const customRole = async (tenant: Tenant, projectId: string, permissions: RuleInput[]) =>
  expectOk(
    await tenant.admin.roles.create({
      params: { projectId },
      body: { slug: uniqueName("tpl"), name: "Templated", permissions },
    }),
  ).role;

/** Folders `/<name>` in dev, so secret-import listings have something to check paths against. */
const createFolders = async (tenant: Tenant, projectId: string, names: string[]) => {
  for (const name of names)
    expectOk(await tenant.admin.folders.create({ body: { projectId, environment: "dev", path: "/", name } }));
};

const listImports = (who: Pick<TestIdentity, "client">, projectId: string, path: string) =>
  who.client.secretImports.list({ query: { projectId, environment: "dev", path } });

const setMetadata = async (tenant: Tenant, identityId: string, metadata: { key: string; value: string }[]) =>
  expectOk(await tenant.admin.identities.update({ params: { identityId }, body: { metadata } }));

const TEAM_GLOB: RuleInput[] = [
  {
    subject: "secret-imports",
    action: "read",
    conditions: { environment: "dev", secretPath: { $glob: "/{{identity.metadata.team}}/**" } },
  },
];

describe("identity templates in permission conditions", () => {
  it("fills {{identity.id}} per identity: each reads only its own membership", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const role = await customRole(tenant, project.id, [
      { subject: "identity", action: "read", conditions: { identityId: "{{identity.id}}" } },
    ]);
    const [a, b] = await Promise.all(
      [0, 1].map(() => createIdentity(tenant, { projectId: project.id, projectRole: role.slug })),
    );
    const read = (who: TestIdentity, identityId: string) =>
      who.client.projects.getIdentityMembership({ params: { projectId: project.id, identityId } });

    expect((await read(a!, a!.id)).status).toBe(200);
    expect((await read(a!, b!.id)).status).toBe(403);
    expect((await read(b!, b!.id)).status).toBe(200);
    expect((await read(b!, a!.id)).status).toBe(403);
  });

  it("fills {{identity.metadata.<key>}} into a $glob as a literal, and follows a metadata change on the next request", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createFolders(tenant, project.id, ["app-a", "app-b"]);
    const role = await customRole(tenant, project.id, TEAM_GLOB);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: role.slug });

    await setMetadata(tenant, member.id, [{ key: "team", value: "app-a" }]);
    expect((await listImports(member, project.id, "/app-a")).status).toBe(200);
    expect((await listImports(member, project.id, "/app-b")).status).toBe(403);

    await setMetadata(tenant, member.id, [{ key: "team", value: "app-b" }]);
    expect((await listImports(member, project.id, "/app-b")).status).toBe(200);
    expect((await listImports(member, project.id, "/app-a")).status).toBe(403);

    // A value with wildcards matches only itself, and a missing key matches nothing.
    await setMetadata(tenant, member.id, [{ key: "team", value: "app-*" }]);
    expect((await listImports(member, project.id, "/app-a")).status).toBe(403);
    await setMetadata(tenant, member.id, []);
    expect((await listImports(member, project.id, "/app-a")).status).toBe(403);
  });

  it("fills {{identity.username}} in a privilege too", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const { identity } = expectOk(await tenant.admin.identities.get({ params: { identityId: member.id } }));
    await createFolders(tenant, project.id, [identity.name, "someone-else"]);
    await grant(tenant, project.id, member, [
      {
        subject: "secret-imports",
        action: "read",
        conditions: { environment: "dev", secretPath: { $glob: "/{{identity.username}}/**" } },
      },
    ]);
    expect((await listImports(member, project.id, `/${identity.name}`)).status).toBe(200);
    expect((await listImports(member, project.id, "/someone-else")).status).toBe(403);
  });

  it("fills {{identity.auth.oidc.claims.<key>}} from the token's own login only", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createFolders(tenant, project.id, ["platform", "qa"]);
    const role = await customRole(tenant, project.id, [
      {
        subject: "secret-imports",
        action: "read",
        conditions: { environment: "dev", secretPath: { $glob: "/{{identity.auth.oidc.claims.team}}/**" } },
      },
    ]);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: role.slug });
    expectOk(
      await tenant.admin.oidcAuth.attach({
        params: { identityId: member.id },
        body: {
          oidcDiscoveryUrl: issuer(),
          boundIssuer: issuer(),
          boundAudiences: AUDIENCE,
          boundClaims: {},
          claimMetadataMapping: { team: "team" },
        },
      }),
    );
    const login = expectOk(
      await tenant.anonymous.oidcAuth.login({
        body: { identityId: member.id, jwt: await providerToken("deploy-bot") },
      }),
    );
    const viaOidc = { client: tenant.app.client(login.accessToken) };

    expect((await listImports(viaOidc, project.id, "/platform")).status).toBe(200);
    expect((await listImports(viaOidc, project.id, "/qa")).status).toBe(403);
    // The same identity through Token Auth has no OIDC claims, whatever was built for the other token.
    expect((await listImports(member, project.id, "/platform")).status).toBe(403);
    expect((await listImports(viaOidc, project.id, "/platform")).status).toBe(200);
  });

  it("refuses template expressions other than identity variables (400), on roles, privileges and project templates alike", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const rules: RuleInput[] = [{ subject: "identity", action: "read", conditions: { identityId: "{{project.id}}" } }];
    const expected = {
      statusCode: 400,
      message: expect.stringMatching(/^Invalid template \{\{project\.id\}\} in permission conditions/),
    };

    const role = await tenant.admin.roles.create({
      params: { projectId: project.id },
      body: { slug: uniqueName("bad"), name: "Bad", permissions: rules },
    });
    expect(role.body).toMatchObject(expected);
    const v2 = await tenant.admin.privileges.v2.create({
      body: { identityId: member.id, projectId: project.id, permissions: rules, type: { isTemporary: false } },
    });
    expect(v2.body).toMatchObject(expected);
    const v1 = await tenant.admin.privileges.v1.createPermanent({
      body: {
        identityId: member.id,
        projectSlug: project.slug,
        privilegePermission: {
          actions: ["read"],
          subject: "secrets",
          conditions: { environment: "dev", secretPath: "/{{ secrets.x }}" },
        },
      },
    });
    expect(v1.body).toMatchObject({
      statusCode: 400,
      message: expect.stringMatching(/^Invalid template \{\{ secrets\.x \}\}/),
    });
    const template = await tenant.admin.projectTemplates.create({
      body: {
        name: uniqueName("tpl"),
        type: "secret-manager",
        roles: [{ name: "Bad", slug: "bad", permissions: rules }],
      },
    });
    expect(template.body).toMatchObject(expected);
  });

  it("lets nobody grant a templated condition on a field they hold only conditionally", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const granter = await createIdentity(tenant, {
      projectId: project.id,
      projectRole: (
        await customRole(tenant, project.id, [
          { subject: "identity", action: ["read", "edit"] },
          {
            subject: "secret-imports",
            action: "read",
            conditions: { environment: "dev", secretPath: { $glob: "/app-a/**" } },
          },
        ])
      ).slug,
    });
    const target = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const create = (who: Pick<TestIdentity, "client">) =>
      who.client.privileges.v2.create({
        body: { identityId: target.id, projectId: project.id, permissions: TEAM_GLOB, type: { isTemporary: false } },
      });

    const refused = await create(granter);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: "PermissionBoundaryError" });
    expect((await create({ client: tenant.admin })).status).toBe(200);
  });
});
