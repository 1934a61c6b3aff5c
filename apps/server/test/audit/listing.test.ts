import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { auditEvents, eventTypes, sinceAnHourAgo } from "./helpers";

const createSecret = async (
  tenant: Awaited<ReturnType<typeof createTenant>>,
  projectId: string,
  name: string,
  environment = "dev",
) =>
  expectOk(
    await tenant.admin.secretsV4.create({
      params: { secretName: name },
      body: { projectId, environment, secretValue: "value" },
    }),
  );

describe("audit log: reading it", () => {
  it("filters by project, environment, secret path and key, event type, actor, user agent and metadata", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const other = await createProject(tenant);
    await createSecret(tenant, project.id, "ALPHA", "dev");
    await createSecret(tenant, project.id, "BETA", "prod");
    await createSecret(tenant, other.id, "GAMMA", "dev");

    expect(eventTypes(await auditEvents(tenant, { projectId: project.id, eventType: "create-secret" }))).toEqual([
      "create-secret",
      "create-secret",
    ]);
    const prod = await auditEvents(tenant, { projectId: project.id, environment: "prod" });
    expect(prod.map((e) => e.event.metadata.secretKey)).toEqual(["BETA"]);
    const byKey = await auditEvents(tenant, { secretKey: "GAMMA", secretPath: "/" });
    expect(byKey.map((e) => e.projectId)).toEqual([other.id]);
    const byMetadata = await auditEvents(tenant, { eventMetadata: "secretKey=ALPHA,environment=dev,broken" });
    expect(byMetadata.map((e) => e.event.metadata.secretKey)).toEqual(["ALPHA"]);

    const byActor = await auditEvents(tenant, { actorType: "identity", actor: tenant.adminIdentityId });
    expect(byActor.length).toBeGreaterThanOrEqual(5);
    expect(byActor.every((e) => e.actor.metadata.identityId === tenant.adminIdentityId)).toBe(true);
    expect(await auditEvents(tenant, { actor: "00000000-0000-0000-0000-000000000001" })).toEqual([]);

    expect((await auditEvents(tenant, { userAgentType: "other" })).length).toBeGreaterThan(0);
    expect(await auditEvents(tenant, { userAgentType: "web" })).toEqual([]);
  });

  it("answers newest first, pages with offset and limit, and keeps to the date window", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    for (const name of ["ONE", "TWO", "THREE"]) await createSecret(tenant, project.id, name);
    const all = await auditEvents(tenant, { projectId: project.id, eventType: "create-secret" });
    expect(all.map((e) => e.event.metadata.secretKey)).toEqual(["THREE", "TWO", "ONE"]);
    const page = await auditEvents(tenant, { projectId: project.id, eventType: "create-secret", offset: 1, limit: 1 });
    expect(page.map((e) => e.event.metadata.secretKey)).toEqual(["TWO"]);
    const past = await auditEvents(tenant, {
      startDate: new Date(Date.now() - 7_200_000).toISOString(),
      endDate: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect(past).toEqual([]);
    // Without dates: since last midnight (UTC), so today's events show.
    const today = expectOk(await tenant.admin.auditLogs.list({ query: { projectId: project.id } }));
    expect(today.auditLogs.length).toBeGreaterThan(0);
  });

  it("answers the reference's 400 and 422 for filters it cannot apply", async () => {
    const tenant = await createTenant();
    const unsupported = await tenant.admin.auditLogs.list({ query: { actorType: "platform", actor: "x" } });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body).toMatchObject({ message: "Actor type 'platform' does not support filtering by actor ID" });

    const reversed = await tenant.admin.auditLogs.list({
      query: { startDate: "2026-02-01T00:00:00Z", endDate: "2026-01-01T00:00:00Z" },
    });
    expect(reversed.status).toBe(422);
    expect(JSON.stringify(reversed.body)).toContain("End date cannot be before start date");
    const wide = await tenant.admin.auditLogs.list({
      query: { startDate: "2026-01-01T00:00:00Z", endDate: "2026-06-01T00:00:00Z" },
    });
    expect(wide.status).toBe(422);
    expect(JSON.stringify(wide.body)).toContain("Dates must be within 3 months");
    const tooMany = await tenant.admin.auditLogs.list({ query: { limit: 1001 } });
    expect(tooMany.status).toBe(422);
  });

  it("needs audit-logs read in the organization, or in the project when one is named", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const member = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "viewer" });
    const outsider = await createIdentity(tenant, {
      orgRole: "member",
      projectId: project.id,
      projectRole: "no-access",
    });

    const orgNoAccess = await createIdentity(tenant, {
      orgRole: "no-access",
      projectId: project.id,
      projectRole: "viewer",
    });
    expect((await orgNoAccess.client.auditLogs.list({ query: {} })).status).toBe(403);
    expect(
      expectOk(await orgNoAccess.client.auditLogs.list({ query: { projectId: project.id } })).auditLogs,
    ).toBeDefined();
    // The org member role reads the organization's audit log, as Infisical's does.
    expect((await member.client.auditLogs.list({ query: {} })).status).toBe(200);
    expect((await outsider.client.auditLogs.list({ query: { projectId: project.id } })).status).toBe(403);
    expect((await orgNoAccess.client.auditLogs.verify({ query: {} })).status).toBe(403);
    expect((await tenant.anonymous.auditLogs.list({ query: {} })).status).toBe(401);
  });

  it("lists every event type the routes and background work record, sorted, for whoever may read the organization's log", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { eventTypes: types } = expectOk(await tenant.admin.auditLogs.eventTypes());
    expect(types).toEqual([...new Set(types)].sort());
    expect(types).toEqual(
      expect.arrayContaining([
        "create-secret",
        "get-secrets",
        "login-identity-universal-auth",
        "login-identity-universal-auth-failed",
        "secret-sync-sync-secrets",
        // recorded only by background work, with no route of their own
        "automated-renew-certificate",
        "complete-root-key-rotation",
        "revoke-dynamic-secret-lease",
      ]),
    );
    const orgNoAccess = await createIdentity(tenant, {
      orgRole: "no-access",
      projectId: project.id,
      projectRole: "viewer",
    });
    expect((await orgNoAccess.client.auditLogs.eventTypes()).status).toBe(403);
    expect((await tenant.anonymous.auditLogs.eventTypes()).status).toBe(401);
  });

  it("never shows another organization's events, and another tenant's project is a 404", async () => {
    const tenant = await createTenant();
    const stranger = await createTenant();
    const project = await createProject(tenant);
    await createSecret(tenant, project.id, "MINE");
    const theirs = await auditEvents(stranger, {});
    expect(theirs.every((e) => e.orgId === stranger.orgId)).toBe(true);
    expect(theirs.some((e) => e.projectId === project.id)).toBe(false);
    const foreign = await stranger.admin.auditLogs.list({ query: { projectId: project.id } });
    expect(foreign.status).toBe(404);
  });

  it("keeps the deprecated project route", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createSecret(tenant, project.id, "LEGACY");
    const body = expectOk(
      await tenant.admin.auditLogs.listProject({
        params: { projectId: project.id },
        query: { ...sinceAnHourAgo(), eventType: "create-secret" },
      }),
    );
    expect(body.auditLogs.map((e) => e.event.metadata.secretKey)).toEqual(["LEGACY"]);
  });

  it("sets a project's retention, shorter than the default, on events written after it", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    expectOk(
      await tenant.admin.auditLogs.setProjectRetention({
        params: { projectId: project.id },
        body: { auditLogsRetentionDays: 7 },
      }),
    );
    await createSecret(tenant, project.id, uniqueName("KEPT_A_WEEK").replace(/-/g, "_"));
    const [event] = await auditEvents(tenant, { projectId: project.id, eventType: "create-secret" });
    expect(Date.parse(event!.expiresAt!) - Date.parse(event!.createdAt)).toBe(7 * 86_400_000);
    const viewer = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.auditLogs.setProjectRetention({
      params: { projectId: project.id },
      body: { auditLogsRetentionDays: 1 },
    });
    expect(denied.status).toBe(403);
    const changed = await auditEvents(tenant, {
      projectId: project.id,
      eventType: "update-project-audit-logs-retention",
    });
    expect(changed).toHaveLength(1);
  });
});
