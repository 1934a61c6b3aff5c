import { beforeAll } from "vitest";
import type { AccessRequestPermission } from "@keyward/contract";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";

export const SECRET_NAME = "DB_PASSWORD";
export const SECRET_VALUE = "requested-value";

/** Read on the secrets at the root of dev, in the packed form access requests take. */
export const READ_DEV_ROOT: AccessRequestPermission[] = [
  ["read", "secrets", { environment: "dev", secretPath: { $glob: "/" } }],
];

export type Fixture = {
  tenant: Tenant;
  project: { id: string; slug: string };
  /** Two project admins who approve. */
  approvers: [TestIdentity, TestIdentity];
  /** A project member with no access at all. */
  requester: TestIdentity;
};

/** One tenant for a file's tests, made before they run; each call of the result is a fresh project in it. */
export const fixturesInOneTenant = () => {
  let tenant: Tenant | undefined;
  beforeAll(async () => {
    tenant = await createTenant();
  });
  return () => createFixture(tenant);
};

/** A project with a secret at dev's root, two admin identities and one without access. */
export const createFixture = async (onTenant?: Tenant): Promise<Fixture> => {
  const tenant = onTenant ?? (await createTenant());
  const project = await createProject(tenant);
  const member = { projectId: project.id };
  const [a, b, requester] = await Promise.all([
    createIdentity(tenant, { ...member, projectRole: "admin" }),
    createIdentity(tenant, { ...member, projectRole: "admin" }),
    createIdentity(tenant, { ...member, projectRole: "no-access" }),
  ]);
  expectOk(
    await tenant.admin.secretsV3.create({
      params: { secretName: SECRET_NAME },
      body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: SECRET_VALUE },
    }),
  );
  return { tenant, project, approvers: [a, b], requester };
};

type PolicyBody = Parameters<Tenant["admin"]["accessApprovalPolicies"]["create"]>[0]["body"];

/** A policy on dev's root approved by the fixture's two approvers (one approval unless told). */
export const createPolicy = async (f: Fixture, overrides: Partial<PolicyBody> = {}) =>
  expectOk(
    await f.tenant.admin.accessApprovalPolicies.create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        approvers: f.approvers.map((a) => ({ type: "identity" as const, id: a.id })),
        ...overrides,
      },
    }),
  ).approval;

export const requestAccess = (
  who: TestIdentity | { client: Tenant["admin"] },
  f: Fixture,
  body: { permissions?: AccessRequestPermission[]; isTemporary?: boolean; temporaryRange?: string } = {},
) =>
  who.client.accessApprovalRequests.create({
    query: { projectSlug: f.project.slug },
    body: { permissions: body.permissions ?? READ_DEV_ROOT, isTemporary: body.isTemporary ?? false, ...body },
  });

export const review = (
  who: { client: Tenant["admin"] },
  requestId: string,
  status: "approved" | "rejected",
  bypassReason?: string,
) =>
  who.client.accessApprovalRequests.review({
    params: { requestId },
    body: { status, ...(bypassReason !== undefined ? { bypassReason } : {}) },
  });

/** The requester's read of the secret: 200 with access, 403 without. */
export const readSecret = async (who: { client: Tenant["admin"] }, f: Fixture) =>
  (
    await who.client.secretsV3.get({
      params: { secretName: SECRET_NAME },
      query: { workspaceId: f.project.id, environment: "dev", secretPath: "/" },
    })
  ).status;

/** The request as its project's admin lists it. */
export const listed = async (f: Fixture, requestId: string) =>
  expectOk(await f.tenant.admin.accessApprovalRequests.list({ query: { projectSlug: f.project.slug } })).requests.find(
    (r) => r.id === requestId,
  );

/** How many privileges (of either kind) point back at the request. */
export const privilegeCount = async (f: Fixture, requestId: string) => {
  const db = f.tenant.app.deps.db;
  const [identities, people] = await Promise.all([
    db
      .selectFrom("identity_project_additional_privileges")
      .select("id")
      .where("access_request_id", "=", requestId)
      .execute(),
    db
      .selectFrom("user_project_additional_privileges")
      .select("id")
      .where("access_request_id", "=", requestId)
      .execute(),
  ]);
  return identities.length + people.length;
};
