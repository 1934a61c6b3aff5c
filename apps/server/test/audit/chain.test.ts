import { createHash } from "node:crypto";
import fc from "fast-check";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { inTransaction } from "../../src/db/transaction";
import { bufferAuditEvent, flushAuditBuffer } from "../../src/modules/audit/audit-buffer";
import { pruneAuditLogs } from "../../src/modules/audit/audit-retention";
import { anchorChain, chainEventsAfter } from "../../src/modules/audit/audit.repository";
import { verifyAllAuditChains } from "../../src/modules/audit/audit.service";
import { hashChained } from "../../src/modules/audit/audit-chain";
import { writeAuditEvents, type AuditEventInput } from "../../src/modules/audit/audit-writer";
import { startTestApp, type TestApp } from "../helpers/app";
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

describe("audit chain hash", () => {
  it("is SHA-256 of the previous hash, a newline and the content, as chains written before were hashed", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ unit: "grapheme" }), (prev, content) => {
        const stepwise = createHash("sha256").update(prev).update("\n").update(content).digest("hex");
        expect(hashChained(prev, content)).toBe(stepwise);
      }),
    );
  });
});

/**
 * A project with three secrets written on day 0 and two on day 60 of the app's clock (`setDay` moves
 * it): past the default 90-day retention, the first three events expire first.
 */
const oldAndNewSecrets = async (app: TestApp) => {
  let offset = 0;
  app.deps.clock.now = () => Date.now() + offset;
  const setDay = (day: number) => {
    offset = day * 86_400_000;
  };
  const tenant = await createTenant(app);
  const project = await createProject(tenant);
  await createSecrets(tenant, project.id, ["OLD_1", "OLD_2", "OLD_3"]);
  setDay(60);
  await createSecrets(tenant, project.id, ["NEW_1", "NEW_2"]);
  return { tenant, project, setDay };
};

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

  it("stores every field of an event as hashed, whatever its metadata, and the verifier agrees", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { deps } = tenant.app;
    const leaf = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.string().map((s) => `${s}\u0000${s}`),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.date({ min: new Date(0), max: new Date(4e12) }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        leaf,
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: "binary" }), tie("node"), { maxKeys: 4 }),
      ),
    })).node;
    const metadata = fc.sample(fc.dictionary(fc.string({ unit: "binary" }), value, { maxKeys: 6 }), {
      numRuns: 40,
      seed: 15,
    });
    const start = Date.UTC(2026, 0, 1);
    const events: AuditEventInput[] = metadata.map((m, i) => ({
      orgId: tenant.orgId,
      projectId: project.id,
      projectName: i % 4 === 0 ? `renamed "${i}"` : undefined,
      actor: { type: "identity", id: tenant.adminIdentityId, metadata: { identityId: tenant.adminIdentityId, n: i } },
      type: "get-secret",
      metadata: { ...m, index: i },
      ipAddress: i % 2 ? "2001:db8::1" : null,
      userAgent: i % 3 ? "InfisicalNodeSDK/5.0" : null,
      createdAt: new Date(start + i),
    }));
    // Half buffered as reads are, half written in a transaction as changes are.
    for (const event of events.slice(0, 20)) bufferAuditEvent(deps, event);
    await flushAuditBuffer(deps);
    await inTransaction(deps.db, (trx) => writeAuditEvents(trx, deps.env.AUDIT_LOG_RETENTION_DAYS, events.slice(20)));

    const { rows } = await sql<{
      project_name: string;
      actor_metadata: unknown;
      event_metadata: { index: number };
      ip_address: string | null;
      user_agent_type: string;
      created_at: Date;
      expires_at: Date;
    }>`select * from audit_logs where chain_id = ${project.id} and event_type = 'get-secret' order by seq`.execute(
      deps.db,
    );
    expect(rows.map((r) => r.event_metadata.index)).toEqual(events.map((_, i) => i));
    rows.forEach((row, i) => {
      const event = events[i]!;
      // What jsonb gives back is what JSON would: NUL removed, dates as text, undefined members gone.
      const expected = JSON.parse(JSON.stringify(event.metadata).replaceAll("\\u0000", "")) as unknown;
      expect(row.event_metadata).toEqual(expected);
      expect(row.actor_metadata).toEqual(event.actor.metadata);
      expect(row.project_name).toBe(event.projectName ?? project.name);
      expect(row.ip_address).toBe(event.ipAddress);
      expect(row.user_agent_type).toBe(event.userAgent ? "InfisicalNodeSDK" : "other");
      expect(row.created_at.getTime()).toBe(event.createdAt.getTime());
      expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(deps.env.AUDIT_LOG_RETENTION_DAYS * 86_400_000);
    });
    expect(await verify(tenant, project.id)).toMatchObject({ valid: true });
  });

  it("prunes an expired prefix and the rest still verifies from its anchor", async () => {
    const app = await startTestApp();
    try {
      const { tenant, project, setDay } = await oldAndNewSecrets(app);
      const window = {
        startDate: new Date(Date.now() - 3_600_000).toISOString(),
        endDate: new Date(Date.now() + 61 * 86_400_000).toISOString(),
      };
      const listed = async () =>
        expectOk(await tenant.admin.auditLogs.list({ query: { ...window, projectId: project.id, limit: 1000 } }))
          .auditLogs;
      expect((await listed()).length).toBe(6);

      setDay(91);
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

  it("a pruner stopped between moving the anchor and deleting leaves a valid chain, and the next pass deletes the rest", async () => {
    const app = await startTestApp();
    try {
      const { tenant, project, setDay } = await oldAndNewSecrets(app);
      setDay(91);
      const now = new Date(app.deps.clock.now());
      // The project's chain: the one holding the NEW_1 event.
      const { rows } = await sql<{ chain_id: string; pruned_seq: string }>`select c.chain_id, c.pruned_seq::text
        from audit_log_chains c join audit_logs l on l.chain_id = c.chain_id
        where l.project_id = ${project.id} limit 1`.execute(app.deps.db);
      const chain = rows[0]!;
      const run = await chainEventsAfter(app.deps.db, chain.chain_id, chain.pruned_seq, now, 1_000);
      const expired = run.filter((row) => row.expired);
      expect(expired.length).toBeGreaterThanOrEqual(3);
      const last = expired.at(-1)!;
      // What a pruner does first, and then stops: the anchor moves, nothing is deleted.
      await anchorChain(app.deps.db, chain.chain_id, { seq: String(last.seq), hash: last.hash });
      const below = async () =>
        Number(
          (
            await sql<{ n: string }>`select count(*)::text as n from audit_logs
              where chain_id = ${chain.chain_id} and seq <= ${String(last.seq)}`.execute(app.deps.db)
          ).rows[0]!.n,
        );
      expect(await below()).toBe(expired.length);
      expect(await verify(tenant, project.id)).toEqual({ valid: true, checked: 2 });
      expect(await verifyAllAuditChains(app.deps.db)).toMatchObject({ valid: true });

      expect(await pruneAuditLogs(app.deps)).toBeGreaterThanOrEqual(expired.length);
      expect(await below()).toBe(0);
      expect(await verify(tenant, project.id)).toEqual({ valid: true, checked: 2 });
      expect(await verifyAllAuditChains(app.deps.db)).toMatchObject({ valid: true });
    } finally {
      await app.close();
    }
  });
});
