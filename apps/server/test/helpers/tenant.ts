import { randomBytes } from "node:crypto";
import type { KeywardClient } from "@keyward/client";
import { getTestApp, type TestApp } from "./app";

export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

/** Fail loudly with the body when a setup call does not succeed. */
export const expectOk = <R extends { status: number; body: unknown }>(
  response: R,
): Extract<R, { status: 200 }>["body"] => {
  if (response.status !== 200)
    throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
};

/** A secret write's answer when it was made: a change request opened instead fails loudly. */
export const expectWritten = <R extends { status: number; body: unknown }>(response: R) => {
  const body = expectOk(response);
  if (typeof body === "object" && body !== null && "approval" in body)
    throw new Error(`expected a write, a change request was opened: ${JSON.stringify(body)}`);
  return body as Exclude<typeof body, { approval: unknown }>;
};

export type Tenant = {
  app: TestApp;
  orgId: string;
  orgSlug: string;
  adminIdentityId: string;
  adminToken: string;
  admin: KeywardClient;
  anonymous: KeywardClient;
};

/** A fresh organization with its own admin identity, so tests never see each other's data. */
export const createTenant = async (onApp?: TestApp): Promise<Tenant> => {
  const app = onApp ?? (await getTestApp());
  const body = expectOk(
    await app.client(app.rootToken).system.createOrganization({ body: { name: uniqueName("org") } }),
  );
  return {
    app,
    orgId: body.organization.id,
    orgSlug: body.organization.slug,
    adminIdentityId: body.identity.id,
    adminToken: body.identity.credentials.token,
    admin: app.client(body.identity.credentials.token),
    anonymous: app.client(),
  };
};

export const createProject = async (
  tenant: Tenant,
  type: "secret-manager" | "cert-manager" | "ssh" = "secret-manager",
) => expectOk(await tenant.admin.projects.create({ body: { projectName: uniqueName("project"), type } })).project;

export type TestIdentity = { id: string; token: string; client: KeywardClient };

/**
 * An organization identity with Token Auth and a token; optionally a member of a project with a role.
 */
export const createIdentity = async (
  tenant: Tenant,
  options: {
    orgRole?: string;
    projectId?: string;
    projectRole?: string;
    tokenAuth?: Partial<{
      accessTokenTTL: number;
      accessTokenMaxTTL: number;
      accessTokenNumUsesLimit: number;
      accessTokenTrustedIps: { ipAddress: string }[];
    }>;
  } = {},
): Promise<TestIdentity> => {
  const { identity } = expectOk(
    await tenant.admin.identities.create({
      body: { name: uniqueName("identity"), organizationId: tenant.orgId, role: options.orgRole ?? "no-access" },
    }),
  );
  expectOk(await tenant.admin.tokenAuth.attach({ params: { identityId: identity.id }, body: options.tokenAuth ?? {} }));
  const { accessToken } = expectOk(
    await tenant.admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }),
  );
  if (options.projectId) {
    expectOk(
      await tenant.admin.projects.addIdentityMembership({
        params: { projectId: options.projectId, identityId: identity.id },
        body: { role: options.projectRole ?? "no-access" },
      }),
    );
  }
  return { id: identity.id, token: accessToken, client: tenant.app.client(accessToken) };
};
