import { randomBytes } from "node:crypto";
import { createFreshDatabase } from "@keyward/test-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectOk, uniqueName } from "../helpers/tenant";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";

/**
 * Granted access seen by another instance: two server processes on one PostgreSQL database (the
 * suite's PostgreSQL pass; the PGlite pass would run the very same thing again).
 */
const onPostgres = process.env.DATABASE_URL !== undefined;
let a: Spawned;
let b: Spawned;
let projectId: string;
let projectSlug: string;
const identities: Record<"approver" | "requester", { id: string; token: string }> = {} as never;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  if (!onPostgres) return;
  const targetUrl = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!targetUrl) throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup did not start PostgreSQL");
  const env = {
    DATABASE_URL: await createFreshDatabase(targetUrl, "keyward_access"),
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    WORKERS: "1",
  };
  a = await spawnKeyward(env);
  b = await spawnKeyward(env, { bootstrap: false });
  const root = a.client(a.rootToken);
  const { project } = expectOk(
    await root.projects.create({ body: { projectName: uniqueName("access"), type: "secret-manager" } }),
  );
  ({ id: projectId, slug: projectSlug } = project);
  for (const [who, role] of [
    ["approver", "admin"],
    ["requester", "no-access"],
  ] as const) {
    const { identity } = expectOk(
      await root.identities.create({ body: { name: uniqueName(who), organizationId: a.orgId, role: "no-access" } }),
    );
    expectOk(
      await root.projects.addIdentityMembership({ params: { projectId, identityId: identity.id }, body: { role } }),
    );
    expectOk(await root.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
    const { accessToken } = expectOk(
      await root.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }),
    );
    identities[who] = { id: identity.id, token: accessToken };
  }
  expectOk(
    await root.secretsV3.create({
      params: { secretName: "SHARED" },
      body: { workspaceId: projectId, environment: "dev", secretPath: "/", secretValue: "across" },
    }),
  );
  expectOk(
    await root.accessApprovalPolicies.create({
      body: {
        projectSlug,
        environment: "dev",
        approvers: [{ type: "identity", id: identities.approver.id }],
      },
    }),
  );
}, 180_000);

afterAll(async () => {
  if (!onPostgres) return;
  await Promise.all([a && stopKeyward(a), b && stopKeyward(b)]);
});

/** The requester's read of the secret through instance `server`. */
const readOn = async (server: Spawned) =>
  (
    await server.client(identities.requester.token).secretsV3.get({
      params: { secretName: "SHARED" },
      query: { workspaceId: projectId, environment: "dev", secretPath: "/" },
    })
  ).status;

const requestAndApprove = async (temporaryRange: string) => {
  const { approval } = expectOk(
    await a.client(identities.requester.token).accessApprovalRequests.create({
      query: { projectSlug },
      body: {
        permissions: [["read", "secrets", { environment: "dev", secretPath: { $glob: "/" } }]],
        isTemporary: true,
        temporaryRange,
      },
    }),
  );
  // Instance b has refused (and cached) the requester's ability before the approval.
  expect(await readOn(b)).toBe(403);
  expectOk(
    await a.client(identities.approver.token).accessApprovalRequests.review({
      params: { requestId: approval.id },
      body: { status: "approved" },
    }),
  );
  return approval.id;
};

describe.runIf(onPostgres)("access granted by a request, seen by another instance", () => {
  it("starts at approval and ends on time (±1 s) on the other instance", async () => {
    const requestId = await requestAndApprove("2s");
    const approvedAt = Date.now();
    expect(await readOn(b)).toBe(200);
    const { requests } = expectOk(
      await a.client(identities.approver.token).accessApprovalRequests.list({ query: { projectSlug } }),
    );
    const end = Date.parse(requests.find((r) => r.id === requestId)!.privilege!.temporaryAccessEndTime!);
    expect(end - approvedAt).toBeLessThanOrEqual(2_000);
    let refusedAt: number | undefined;
    while (Date.now() < end + 3_000) {
      const status = await readOn(b);
      if (status === 403) {
        refusedAt = Date.now();
        break;
      }
      expect(status).toBe(200);
      await sleep(100);
    }
    expect(refusedAt).toBeDefined();
    expect(Math.abs(refusedAt! - end)).toBeLessThanOrEqual(1_000);
  }, 60_000);

  it("a revocation through one instance ends the access on the other at once", async () => {
    const requestId = await requestAndApprove("1h");
    expect(await readOn(b)).toBe(200);
    expectOk(await a.client(identities.approver.token).accessApprovalRequests.revoke({ params: { requestId } }));
    expect(await readOn(b)).toBe(403);
  }, 60_000);
});
