import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inTransaction } from "../../src/db/transaction";
import { pruneAuditLogs } from "../../src/modules/audit/audit-retention";
import { writeAuditEvents, type AuditEventInput } from "../../src/modules/audit/audit-writer";
import { startTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";

const DAY_MS = 86_400_000;

let app: TestApp;
let tenant: Tenant;
let projectId: string;
const base = Date.now() - 10 * DAY_MS;
const window = { startDate: new Date(base - DAY_MS).toISOString(), endDate: new Date(base + DAY_MS).toISOString() };

/** Events of the test's project at `createdAt`, alternating two types, written as the writer does. */
const write = (count: number, at: (i: number) => number, types = ["bench-a", "bench-b"]) => {
  const events: AuditEventInput[] = Array.from({ length: count }, (_, i) => ({
    orgId: tenant.orgId,
    projectId,
    actor: { type: "platform", id: null, metadata: {} },
    type: types[i % types.length]!,
    metadata: { i },
    ipAddress: null,
    userAgent: null,
    createdAt: new Date(at(i)),
  }));
  return inTransaction(tenant.app.deps.db, (trx) =>
    writeAuditEvents(trx, tenant.app.deps.env.AUDIT_LOG_RETENTION_DAYS, events),
  );
};

beforeAll(async () => {
  // An app of its own: pruning with a clock moved ahead would empty other files' chains.
  app = await startTestApp();
  tenant = await createTenant(app);
  projectId = (await createProject(tenant)).id;
  // 23 events in runs of 4 sharing one millisecond: the cursor must split runs without loss.
  await write(23, (i) => base + Math.floor(i / 4) * 1000);
});

afterAll(() => app?.close());

describe("audit log: cursor paging", () => {
  const list = (query: Record<string, string | number>) =>
    tenant.admin.auditLogs.list({ query: { ...window, projectId, ...query } });

  it("pages with nextCursor through the same rows as one long page, with filters, no repeats or gaps", async () => {
    for (const filter of [{}, { eventType: "bench-b" }] as Record<string, string>[]) {
      const all = expectOk(await list({ ...filter, limit: 1000 }));
      expect(all.nextCursor).toBeNull();
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { auditLogs: { id: string }[]; nextCursor: string | null } = expectOk(
          await list({ ...filter, limit: 5, ...(cursor ? { cursor } : {}) }),
        );
        paged.push(...page.auditLogs.map((e) => e.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged).toEqual(all.auditLogs.map((e) => e.id));
      expect(new Set(paged).size).toBe(paged.length);
    }
    expect(expectOk(await list({ limit: 1000 })).auditLogs).toHaveLength(23);
  });

  it("refuses a forged cursor and a cursor with an offset (400), and needs audit-logs read (403)", async () => {
    const first = expectOk(await list({ limit: 5 }));
    for (const cursor of ["not-a-cursor", Buffer.from("2026-01-01 x").toString("base64url"), "a.b"]) {
      expect((await list({ cursor })).status).toBe(400);
    }
    expect((await list({ cursor: first.nextCursor!, offset: 5 })).status).toBe(400);
    const outsider = await createIdentity(tenant, { orgRole: "member", projectId, projectRole: "no-access" });
    expect((await outsider.client.auditLogs.list({ query: { projectId, cursor: first.nextCursor! } })).status).toBe(
      403,
    );
  });
});

describe("audit log: verifying a window and pruning in batches", () => {
  it("verifies a window from its first event, and prunes in small runs beside appends, leaving a chain that verifies", async () => {
    const verify = (query: Record<string, string> = {}) =>
      tenant.admin.auditLogs.verify({ query: { projectId, ...query } });
    expect(expectOk(await verify(window))).toEqual({ valid: true, checked: 23 });

    // 7 expired events come after, in chain order, though created 100 days ago: pruning waits for the prefix.
    await write(7, (i) => Date.now() - 100 * DAY_MS + i);
    const head = expectOk(await verify());
    expect(head.valid).toBe(true);

    const clock = tenant.app.deps.clock;
    const realNow = clock.now;
    try {
      // In 95 days every event so far is older than the retention; the two appended meanwhile are not.
      clock.now = () => realNow() + 95 * DAY_MS;
      const pruning = pruneAuditLogs(tenant.app.deps, { batch: 3, pauseMs: 1 });
      await write(2, () => realNow() + 95 * DAY_MS);
      const removed = await pruning;
      expect(removed).toBeGreaterThanOrEqual(30);
    } finally {
      clock.now = realNow;
    }
    // What remains (the two appended, created "in 95 days") verifies from the anchor pruning left.
    const after = expectOk(await verify({ endDate: new Date(Date.now() + 96 * DAY_MS).toISOString() }));
    expect(after).toEqual({ valid: true, checked: 2 });
  });
});
