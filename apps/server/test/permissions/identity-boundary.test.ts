import { describe, expect, it } from "vitest";
import { createBareIdentity } from "../auth-methods/helpers";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  uniqueName,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";
import type { RuleInput } from "./helpers";

const BOUNDARY = { status: 403, body: { error: "PermissionBoundaryError" } };

const customRole = async (tenant: Tenant, projectId: string, permissions: RuleInput[]) =>
  expectOk(
    await tenant.admin.roles.create({
      params: { projectId },
      body: { slug: uniqueName("role"), name: "Custom", permissions },
    }),
  ).role;

const IDENTITY_MANAGER: RuleInput[] = [
  {
    subject: "identity",
    action: ["read", "create", "edit", "delete", "revoke-auth", "create-token", "get-token", "delete-token"],
  },
];

/**
 * A project identity that is project admin, and a project member who may do anything to identities
 * (a custom role) but is no admin.
 */
const adminTargetAndManager = async () => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  const target = expectOk(
    await tenant.admin.projectIdentities.create({
      params: { projectId: project.id },
      body: { name: uniqueName("svc") },
    }),
  ).identity;
  expectOk(
    await tenant.admin.projects.updateIdentityMembership({
      params: { projectId: project.id, identityId: target.id },
      body: { roles: [{ role: "admin" }] },
    }),
  );
  const role = await customRole(tenant, project.id, IDENTITY_MANAGER);
  const manager = await createIdentity(tenant, { projectId: project.id, projectRole: role.slug });
  const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
  return { tenant, project, target, manager, member };
};

describe("acting on an identity that holds more than the caller", () => {
  it("refuses every credential operation on a project-admin identity to an identity manager", async () => {
    const { tenant, project, target, manager, member } = await adminTargetAndManager();
    const c = manager.client;
    const identityId = target.id;
    expectOk(await tenant.admin.tokenAuth.attach({ params: { identityId }, body: {} }));

    expect(await c.tokenAuth.createToken({ params: { identityId }, body: {} })).toMatchObject(BOUNDARY);
    expect(
      await c.tokenAuth.update({
        params: { identityId },
        body: { accessTokenTrustedIps: [{ ipAddress: "0.0.0.0/0" }] },
      }),
    ).toMatchObject(BOUNDARY);
    expect(await c.tokenAuth.revoke({ params: { identityId } })).toMatchObject(BOUNDARY);
    expect(await c.universalAuth.attach({ params: { identityId }, body: {} })).toMatchObject(BOUNDARY);
    expect(
      await c.projectIdentities.update({ params: { projectId: project.id, identityId }, body: { name: "renamed" } }),
    ).toMatchObject(BOUNDARY);
    expect(
      await c.projectIdentities.update({
        params: { projectId: project.id, identityId },
        body: { metadata: [{ key: "team", value: "x" }] },
      }),
    ).toMatchObject(BOUNDARY);
    expect(await c.projectIdentities.delete({ params: { projectId: project.id, identityId } })).toMatchObject(BOUNDARY);

    // The admin's universal auth exists; the member still cannot mint a client secret for it.
    expectOk(await tenant.admin.universalAuth.attach({ params: { identityId }, body: {} }));
    const denied = await c.universalAuth.createClientSecret({ params: { identityId }, body: {} });
    expect(denied).toMatchObject(BOUNDARY);
    expect(JSON.stringify(denied.body)).toContain("missingPermissions");

    // A built-in member may rename and delete identities, but not this one.
    expect(
      await member.client.projectIdentities.update({
        params: { projectId: project.id, identityId },
        body: { name: "x" },
      }),
    ).toMatchObject(BOUNDARY);
    expect(
      await member.client.projectIdentities.delete({ params: { projectId: project.id, identityId } }),
    ).toMatchObject(BOUNDARY);

    // Nothing changed: the identity still exists under its name.
    const after = expectOk(await tenant.admin.projectIdentities.get({ params: { projectId: project.id, identityId } }));
    expect(after.identity.name).toBe(target.name);
  });

  it("still lets the member manage identities that hold no more than it does", async () => {
    const { tenant, project, manager } = await adminTargetAndManager();
    const lesser = expectOk(
      await manager.client.projectIdentities.create({
        params: { projectId: project.id },
        body: { name: uniqueName("lesser") },
      }),
    ).identity;
    expectOk(await tenant.admin.tokenAuth.attach({ params: { identityId: lesser.id }, body: {} }));
    const token = expectOk(await manager.client.tokenAuth.createToken({ params: { identityId: lesser.id }, body: {} }));
    expect(token.accessToken.length).toBeGreaterThan(20);
    expectOk(
      await manager.client.projectIdentities.update({
        params: { projectId: project.id, identityId: lesser.id },
        body: { name: uniqueName("renamed") },
      }),
    );
    expectOk(
      await manager.client.projectIdentities.delete({ params: { projectId: project.id, identityId: lesser.id } }),
    );
  });

  it("weighs an org identity's memberships in every project, including ones the caller is not in", async () => {
    const tenant = await createTenant();
    const [shared, hidden] = [await createProject(tenant), await createProject(tenant)];
    const target = await createIdentity(tenant, { orgRole: "member", projectId: hidden.id, projectRole: "admin" });
    const manager = await createIdentity(tenant, { orgRole: "admin", projectId: shared.id, projectRole: "admin" });
    const refused = await manager.client.tokenAuth.createToken({ params: { identityId: target.id }, body: {} });
    expect(refused).toMatchObject(BOUNDARY);
    expect(await manager.client.identities.delete({ params: { identityId: target.id } })).toMatchObject(BOUNDARY);
    // Once the caller holds as much in that project, it may.
    expectOk(
      await tenant.admin.projects.addIdentityMembership({
        params: { projectId: hidden.id, identityId: manager.id },
        body: { role: "admin" },
      }),
    );
    expectOk(await manager.client.tokenAuth.createToken({ params: { identityId: target.id }, body: {} }));
  });

  it("counts temporary grants that have not started yet", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const target = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "viewer" });
    const start = new Date(Date.now() + 3_600_000).toISOString();
    expectOk(
      await tenant.admin.projects.updateIdentityMembership({
        params: { projectId: project.id, identityId: target.id },
        body: {
          roles: [
            { role: "viewer" },
            {
              role: "admin",
              isTemporary: true,
              temporaryMode: "relative",
              temporaryRange: "1h",
              temporaryAccessStartTime: start,
            },
          ],
        },
      }),
    );
    const manager = await createIdentity(tenant, { orgRole: "admin", projectId: project.id, projectRole: "member" });
    expect(await manager.client.tokenAuth.createToken({ params: { identityId: target.id }, body: {} })).toMatchObject(
      BOUNDARY,
    );
  });
});

describe("metadata and names read by identity templates", () => {
  const TEAM_RULES: RuleInput[] = [
    { subject: "identity", action: "edit", conditions: { identityId: "{{identity.id}}" } },
    { subject: "identity", action: "read" },
    {
      subject: "secret-imports",
      action: "read",
      conditions: { environment: "dev", secretPath: { $glob: "/{{identity.metadata.team}}/**" } },
    },
  ];

  const selfEditor = async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    for (const name of ["alpha", "beta"])
      expectOk(
        await tenant.admin.folders.create({ body: { projectId: project.id, environment: "dev", path: "/", name } }),
      );
    const role = await customRole(tenant, project.id, TEAM_RULES);
    const self = expectOk(
      await tenant.admin.projectIdentities.create({
        params: { projectId: project.id },
        body: { name: uniqueName("self"), metadata: [{ key: "team", value: "alpha" }] },
      }),
    ).identity;
    expectOk(
      await tenant.admin.projects.updateIdentityMembership({
        params: { projectId: project.id, identityId: self.id },
        body: { roles: [{ role: role.slug }] },
      }),
    );
    expectOk(await tenant.admin.tokenAuth.attach({ params: { identityId: self.id }, body: {} }));
    const { accessToken } = expectOk(
      await tenant.admin.tokenAuth.createToken({ params: { identityId: self.id }, body: {} }),
    );
    const client = tenant.app.client(accessToken);
    const listBeta = () =>
      client.secretImports.list({ query: { projectId: project.id, environment: "dev", path: "/beta" } });
    return { tenant, project, self, client, listBeta };
  };

  it("refuses an identity rewriting its own metadata into access it does not hold", async () => {
    const { project, self, client, listBeta } = await selfEditor();
    expect((await listBeta()).status).toBe(403);
    const changed = await client.projectIdentities.update({
      params: { projectId: project.id, identityId: self.id },
      body: { metadata: [{ key: "team", value: "beta" }] },
    });
    expect(changed).toMatchObject(BOUNDARY);
    expect((await listBeta()).status).toBe(403);
  });

  it("lets an identity change what no template reads", async () => {
    const { project, self, client } = await selfEditor();
    const renamed = uniqueName("renamed");
    const res = await client.projectIdentities.update({
      params: { projectId: project.id, identityId: self.id },
      body: { name: renamed, metadata: [{ key: "team", value: "alpha" }] },
    });
    expect(res.status).toBe(200);
  });
});

describe("stored credentials of auth methods", () => {
  const REVIEWER_JWT = "eyJhbGciOiJSUzI1NiJ9.reviewer-secret.signature";

  it("shows the Kubernetes reviewer JWT only to callers who may edit the method", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    expectOk(
      await tenant.admin.kubernetesAuth.attach({
        params: { identityId: identity.id },
        body: {
          kubernetesHost: "https://127.0.0.1:6443",
          allowedNamespaces: "default",
          allowedNames: "",
          allowedAudience: "",
          tokenReviewerJwt: REVIEWER_JWT,
        },
      }),
    );
    const reader: TestIdentity = await createIdentity(tenant, { orgRole: "member" });
    const seen = expectOk(await reader.client.kubernetesAuth.get({ params: { identityId: identity.id } }));
    expect(seen.identityKubernetesAuth.tokenReviewerJwt).toBe("");
    expect(JSON.stringify(seen)).not.toContain("reviewer-secret");
    const editor = expectOk(await tenant.admin.kubernetesAuth.get({ params: { identityId: identity.id } }));
    expect(editor.identityKubernetesAuth.tokenReviewerJwt).toBe(REVIEWER_JWT);
  });
});
