import type { KeywardClient } from "@keyward/client";
import { createIdentity, createProject, expectOk, uniqueName, type Tenant, type TestIdentity } from "../helpers/tenant";
import { OIDC_TEST_CLIENTS } from "../services/oidc-clients";

/** An organization identity with no auth method yet. */
export const createBareIdentity = async (tenant: Tenant, orgRole = "no-access") =>
  expectOk(
    await tenant.admin.identities.create({
      body: { name: uniqueName("machine"), organizationId: tenant.orgId, role: orgRole },
    }),
  ).identity;

/** A project-owned identity (permissions on it are project permissions) and the project. */
export const createProjectOwnedIdentity = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const { identity } = expectOk(
    await tenant.admin.projectIdentities.create({
      params: { projectId: project.id },
      body: { name: uniqueName("svc") },
    }),
  );
  return { project, identity };
};

/** Callers without the needed permission: an org identity with no org role, a project member with no access. */
export const createUnprivileged = async (tenant: Tenant, projectId?: string): Promise<TestIdentity> =>
  createIdentity(tenant, projectId ? { projectId, projectRole: "no-access" } : { orgRole: "no-access" });

export const MISSING_UUID = "00000000-0000-4000-8000-000000000000";

export type Client = KeywardClient;

export const issuer = () => process.env.KEYWARD_TEST_OIDC_ISSUER!;
export const AUDIENCE = "https://keyward.test/api";

/** A JWT from the real provider, by client credentials. */
export const providerToken = async (clientId: keyof typeof OIDC_TEST_CLIENTS, resource = AUDIENCE) => {
  const res = await fetch(`${issuer()}/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${clientId}:${OIDC_TEST_CLIENTS[clientId].secret}`).toString("base64")}`,
    },
    body: new URLSearchParams({ grant_type: "client_credentials", resource, scope: "api" }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`provider gave no token: ${JSON.stringify(body)}`);
  return body.access_token;
};

/**
 * A project in which `identityId` may read secret imports only under dev's `/<template>/…` (the
 * template reading what a login verified), with a folder per name. The probe answers the status
 * a token of the identity gets when it lists the imports of `/<folder>`.
 */
export const claimTemplateProbe = async (tenant: Tenant, identityId: string, template: string, folders: string[]) => {
  const project = await createProject(tenant);
  for (const name of folders)
    expectOk(
      await tenant.admin.folders.create({ body: { projectId: project.id, environment: "dev", path: "/", name } }),
    );
  const { role } = expectOk(
    await tenant.admin.roles.create({
      params: { projectId: project.id },
      body: {
        slug: uniqueName("by-claim"),
        name: "By claim",
        permissions: [
          {
            subject: "secret-imports",
            action: "read",
            conditions: { environment: "dev", secretPath: { $glob: `/${template}/**` } },
          },
        ],
      },
    }),
  );
  expectOk(
    await tenant.admin.projects.addIdentityMembership({
      params: { projectId: project.id, identityId },
      body: { role: role.slug },
    }),
  );
  return async (accessToken: string, folder: string) =>
    (
      await tenant.app
        .client(accessToken)
        .secretImports.list({ query: { projectId: project.id, environment: "dev", path: `/${folder}` } })
    ).status;
};
