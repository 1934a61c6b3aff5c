import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { inTransaction } from "../../src/db/transaction";
import { writeAuditEvents, type AuditEventInput } from "../../src/modules/audit/audit-writer";
import { createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";

const DAY_MS = 86_400_000;
const base = Date.now() - 3 * DAY_MS;
const window = { startDate: new Date(base - DAY_MS).toISOString(), endDate: new Date(base + DAY_MS).toISOString() };

let tenant: Tenant;
let projectId: string;

/** Twelve events of the tenant's project a second apart, written as the writer does. */
const writeEvents = () => {
  const events: AuditEventInput[] = Array.from({ length: 12 }, (_, i) => ({
    orgId: tenant.orgId,
    projectId,
    actor: { type: "platform", id: null, metadata: {} },
    type: "cursor-test",
    metadata: { i },
    ipAddress: null,
    userAgent: null,
    createdAt: new Date(base + i * 1000),
  }));
  return inTransaction(tenant.app.deps.db, (trx) =>
    writeAuditEvents(trx, tenant.app.deps.env.AUDIT_LOG_RETENTION_DAYS, events),
  );
};

const list = (query: Record<string, string | number>, who: Tenant = tenant) =>
  who.admin.auditLogs.list({ query: { ...window, projectId, ...query } });

/** The cursor with the byte at `index` (negative: from the end) replaced by `byte`, or by another when it is that. */
const altered = (cursor: string, index: number, byte: string) => {
  const raw = Buffer.from(cursor, "base64url");
  const at = index < 0 ? raw.length + index : index;
  raw[at] = raw[at] === byte.charCodeAt(0) ? byte.charCodeAt(0) + 1 : byte.charCodeAt(0);
  return raw.toString("base64url");
};

beforeAll(async () => {
  tenant = await createTenant();
  projectId = (await createProject(tenant)).id;
  await writeEvents();
});

describe("audit log cursors are the server's own", () => {
  it("pages through every event with the cursors it issues", async () => {
    const all = expectOk(await list({ limit: 100 })).auditLogs.map((e) => e.id);
    expect(all).toHaveLength(12);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { auditLogs: { id: string }[]; nextCursor: string | null } = expectOk(
        await list({ limit: 5, ...(cursor ? { cursor } : {}) }),
      );
      paged.push(...page.auditLogs.map((e) => e.id));
      cursor = page.nextCursor;
      if (cursor) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    } while (cursor);
    expect(paged).toEqual(all);
  });

  it("refuses a cursor of the right form that it never issued (400 with the error body)", async () => {
    const page = expectOk(await list({ limit: 5 }));
    const last = page.auditLogs[4]!;
    const position = `${last.createdAt.replace(/Z$/, "000Z")}`;
    const forged = [
      // The position of a real event, as the cursor's text once was.
      Buffer.from(`${position} ${last.id}`, "utf8").toString("base64url"),
      // A plausible position and a random id.
      Buffer.from(`${new Date(base).toISOString().replace(/Z$/, "000Z")} ${randomUUID()}`).toString("base64url"),
    ];
    for (const cursor of forged) {
      const res = await list({ limit: 5, cursor });
      expect(res.status, cursor).toBe(400);
      expect(res.body).toMatchObject({
        statusCode: 400,
        error: "BadRequest",
        message: "Invalid cursor: pass the nextCursor of a previous page unchanged",
      });
      expect(res.body).toHaveProperty("reqId");
    }
  });

  it("refuses an issued cursor altered in its position or its tag, or used in another organization", async () => {
    const cursor = expectOk(await list({ limit: 5 })).nextCursor!;
    expect((await list({ limit: 5, cursor })).status).toBe(200);
    // Still well formed: another hex digit ending the id, another digit starting the year; or another tag byte.
    const idEnd = Buffer.from(cursor, "base64url").indexOf(" ") + 36;
    for (const [index, byte] of [
      [idEnd, "0"],
      [0, "1"],
      [-1, "A"],
    ] as const) {
      const res = await list({ limit: 5, cursor: altered(cursor, index, byte) });
      expect(res.status, String(index)).toBe(400);
      expect((res.body as { message: string }).message).toBe(
        "Invalid cursor: pass the nextCursor of a previous page unchanged",
      );
    }
    // Truncated: the tag cut short.
    expect((await list({ limit: 5, cursor: cursor.slice(0, -4) })).status).toBe(400);
    const other = await createTenant(tenant.app);
    const res = await other.admin.auditLogs.list({ query: { ...window, cursor } });
    expect(res.status).toBe(400);
  });
});
