import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { pruneAuditLogs } from "../../src/modules/audit/audit-retention";
import { startTestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { auditEvents } from "./helpers";

const createSecrets = async (tenant: Tenant, projectId: string, names: string[]) => {
  for (const name of names) {
    expectOk(
      await tenant.admin.secretsV4.create({
        params: { secretName: name },
        body: { projectId, environment: "dev", secretValue: "v" },
      }),
    );
  }
};

const verify = async (tenant: Tenant, projectId?: string) =>
  expectOk(await tenant.admin.auditLogs.verify({ query: projectId ? { projectId } : {} }));

describe("audit log: tamper evidence", () => {
  it("verifies an untouched chain and points at an edited event", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createSecrets(tenant, project.id, ["A", "B", "C"]);
    const before = await verify(tenant);
    expect(before).toMatchObject({ valid: true });
    expect(before.checked).toBeGreaterThanOrEqual(4);

    const [, middle] = await auditEvents(tenant, { projectId: project.id, eventType: "create-secret" });
    await sql`update audit_logs set event_metadata = jsonb_set(event_metadata, '{secretKey}', '"Z"') where id = ${middle!.id}`.execute(
      tenant.app.deps.db,
    );
    expect(await verify(tenant, project.id)).toMatchObject({
      valid: false,
      firstInvalidEventId: middle!.id,
      reason: "content-changed",
    });
  });

  it("notices a removed event and a removed newest event", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createSecrets(tenant, project.id, ["A", "B", "C", "D"]);
    const [newest, third, second] = await auditEvents(tenant, { projectId: project.id, eventType: "create-secret" });

    await sql`delete from audit_logs where id = ${newest!.id}`.execute(tenant.app.deps.db);
    expect(await verify(tenant, project.id)).toMatchObject({
      valid: false,
      firstInvalidEventId: third!.id,
      reason: "events-missing",
    });
    await sql`delete from audit_logs where id = ${second!.id}`.execute(tenant.app.deps.db);
    expect(await verify(tenant, project.id)).toMatchObject({
      valid: false,
      firstInvalidEventId: third!.id,
      reason: "events-missing",
    });
  });

  it("never forks a chain under concurrent writers", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const names = Array.from({ length: 24 }, (_, i) => `PARALLEL_${i}`);
    await Promise.all(
      names.map(async (name) =>
        expectOk(
          await tenant.admin.secretsV4.create({
            params: { secretName: name },
            body: { projectId: project.id, environment: "dev", secretValue: "v" },
          }),
        ),
      ),
    );
    const { rows } = await sql<{
      seq: string;
    }>`select seq::text as seq from audit_logs where chain_id = ${project.id} order by audit_logs.seq`.execute(
      tenant.app.deps.db,
    );
    expect(rows.map((r) => Number(r.seq))).toEqual(rows.map((_, i) => i + 1));
    expect(await verify(tenant, project.id)).toMatchObject({ valid: true, checked: rows.length });
  });

  it("prunes an expired prefix and the rest still verifies from its anchor", async () => {
    const app = await startTestApp();
    try {
      let offset = 0;
      app.deps.clock.now = () => Date.now() + offset;
      const tenant = await createTenant(app);
      const project = await createProject(tenant);
      await createSecrets(tenant, project.id, ["OLD_1", "OLD_2", "OLD_3"]);
      offset = 60 * 86_400_000;
      await createSecrets(tenant, project.id, ["NEW_1", "NEW_2"]);
      const window = {
        startDate: new Date(Date.now() - 3_600_000).toISOString(),
        endDate: new Date(Date.now() + 61 * 86_400_000).toISOString(),
      };
      const listed = async () =>
        expectOk(await tenant.admin.auditLogs.list({ query: { ...window, projectId: project.id, limit: 1000 } }))
          .auditLogs;
      expect((await listed()).length).toBe(6);

      offset = 91 * 86_400_000;
      expect(await pruneAuditLogs(app.deps)).toBeGreaterThanOrEqual(4);
      expect((await listed()).map((e) => e.event.metadata.secretKey)).toEqual(["NEW_2", "NEW_1"]);
      expect(await verify(tenant, project.id)).toEqual({ valid: true, checked: 2 });
      // Removing the event right after the anchor still shows.
      const [, first] = await listed();
      await sql`delete from audit_logs where id = ${first!.id}`.execute(app.deps.db);
      expect(await verify(tenant, project.id)).toMatchObject({ valid: false, reason: "events-missing" });
    } finally {
      await app.close();
    }
  });
});
