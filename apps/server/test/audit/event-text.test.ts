import { createKeywardClient } from "@keyward/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inTransaction } from "../../src/db/transaction";
import { bufferAuditEvent, flushAuditBuffer } from "../../src/modules/audit/audit-buffer";
import { eventHash, toChained } from "../../src/modules/audit/audit-chain";
import { predecessorHash } from "../../src/modules/audit/audit.repository";
import { requestMetadata } from "../../src/modules/audit/audit-request";
import { writeAuditEvents } from "../../src/modules/audit/audit-writer";
import { withTrigger } from "../helpers/triggers";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { auditEvents, auditEventsWhen } from "./helpers";

const LONE = "\ud800";
const FAILED_LOGIN = "login-identity-universal-auth-failed";

/** A client whose requests carry a user agent of their own, so their events can be told apart. */
const taggedClient = (tenant: Tenant) => {
  const userAgent = uniqueName("event-text-agent");
  return {
    userAgent,
    client: createKeywardClient({ baseUrl: tenant.app.baseUrl, headers: { "user-agent": userAgent } }),
  };
};

/** The stored events sent with `userAgent` (refused logins are written just after the response). */
const storedEventsOf = async (tenant: Tenant, userAgent: string) => {
  for (let attempt = 0; ; attempt += 1) {
    const rows = await tenant.app.deps.db
      .selectFrom("audit_logs")
      .selectAll()
      .where("user_agent", "=", userAgent)
      .execute();
    if (rows.length > 0 || attempt >= 50) return rows;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** What the verifier checks of one event: its hash covers what is stored, and it links to its predecessor. */
const expectVerifiable = async (tenant: Tenant, row: Awaited<ReturnType<typeof storedEventsOf>>[number]) => {
  expect(eventHash(toChained(row))).toBe(row.hash);
  expect(await predecessorHash(tenant.app.deps.db, row.chain_id, String(row.seq))).toBe(row.prev_hash);
};

const verify = async (tenant: Tenant) => expectOk(await tenant.admin.auditLogs.verify({ query: {} }));

const universalAuthIdentity = async (tenant: Tenant) => {
  const identity = await createIdentity(tenant, { orgRole: "member" });
  expectOk(await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { clientId } = expectOk(
    await tenant.admin.universalAuth.get({ params: { identityId: identity.id } }),
  ).identityUniversalAuth;
  return { identity, clientId };
};

describe("audit events whose text the database cannot store as it came", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("records a refused login whose client id is not well-formed text, without that field", async () => {
    const tenant = await createTenant();
    const logged = vi.spyOn(tenant.app.deps.logger, "error");
    const { userAgent, client } = taggedClient(tenant);
    const res = await client.universalAuth.login({ body: { clientId: LONE, clientSecret: "x" } });
    expect(res.status).toBe(422);
    const [row, ...others] = await storedEventsOf(tenant, userAgent);
    expect(others).toHaveLength(0);
    expect(row).toMatchObject({ event_type: FAILED_LOGIN, actor_type: "platform", ip_address: "127.0.0.1" });
    expect(row!.event_metadata).toEqual({
      identityId: null,
      reasonCode: "ValidationFailure",
      message: "The request was not valid",
      invalidFields: ["clientId"],
    });
    await expectVerifiable(tenant, row!);
    expect(logged).not.toHaveBeenCalled();
  });

  it("records a refused login whose oversized client id would be cut inside a surrogate pair", async () => {
    const tenant = await createTenant();
    const { userAgent, client } = taggedClient(tenant);
    const clientId = `${"a".repeat(255)}\u{1F511}${"b".repeat(20)}`;
    const res = await client.universalAuth.login({ body: { clientId, clientSecret: "x" } });
    expect(res.status).toBe(422);
    const [row] = await storedEventsOf(tenant, userAgent);
    expect(row).toMatchObject({ event_type: FAILED_LOGIN });
    expect(row!.event_metadata).toMatchObject({ invalidFields: ["clientId"] });
    expect(row!.event_metadata).not.toHaveProperty("clientId");
    await expectVerifiable(tenant, row!);
  });

  it("cuts long request text at a code point boundary, never inside a surrogate pair", () => {
    const name = `${"a".repeat(255)}\u{1F511}${"b".repeat(20)}`;
    const metadata = requestMetadata({
      params: {},
      query: {},
      body: { name, secretPath: `/${"c".repeat(253)}\u{1F511}` },
    });
    expect(metadata).toMatchObject({ name: `${"a".repeat(255)}…`, secretPath: `/${"c".repeat(253)}\u{1F511}` });
  });

  it("stores and hashes lone surrogates of metadata as U+FFFD, so the chain still verifies", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { deps } = tenant.app;
    const marker = uniqueName("lone");
    const event = (type: string) => ({
      orgId: tenant.orgId,
      projectId: project.id,
      actor: { type: "identity" as const, id: tenant.adminIdentityId, metadata: { name: `admin${LONE}` } },
      type,
      metadata: { marker, note: `a${LONE}b`, [`key${"\udc00"}`]: [`\udbff`] },
      ipAddress: "127.0.0.1",
      userAgent: null,
      createdAt: new Date(),
    });
    await inTransaction(deps.db, (trx) =>
      writeAuditEvents(trx, deps.env.AUDIT_LOG_RETENTION_DAYS, [event("create-secret")]),
    );
    bufferAuditEvent(deps, event("get-secret"));
    await flushAuditBuffer(deps);
    expect(deps.auditBuffer.pending).toHaveLength(0);

    const written = (await auditEvents(tenant, { projectId: project.id })).filter(
      (e) => (e.event.metadata as { marker?: string }).marker === marker,
    );
    expect(written.map((e) => e.event.type).sort()).toEqual(["create-secret", "get-secret"]);
    for (const stored of written) {
      expect(stored.event.metadata).toEqual({ marker, note: "a\uFFFDb", "key\uFFFD": ["\uFFFD"] });
      expect(stored.actor.metadata).toEqual({ name: "admin\uFFFD" });
    }
    expect(await verify(tenant)).toMatchObject({ valid: true });
  });

  it("writes a reduced event, marked as such, when the full one cannot be stored", async () => {
    const tenant = await createTenant();
    const { identity, clientId } = await universalAuthIdentity(tenant);
    const logged = vi.spyOn(tenant.app.deps.logger, "error");
    const dropTrigger = await withTrigger(
      tenant.app.deps.db,
      "audit_logs",
      "before insert",
      `if new.event_metadata->>'clientId' = '${clientId}' then raise exception 'metadata refused'; end if; return new;`,
    );
    try {
      const { userAgent, client } = taggedClient(tenant);
      const refused = await client.universalAuth.login({ body: { clientId, clientSecret: "wrong" } });
      expect(refused.status).toBe(401);
      const [failed] = await auditEventsWhen(tenant, { eventType: FAILED_LOGIN }, (found) => found.length > 0);
      expect(failed).toMatchObject({
        actor: { type: "identity", metadata: { identityId: identity.id } },
        event: { type: FAILED_LOGIN, metadata: { metadataReduced: true } },
        ipAddress: "127.0.0.1",
        userAgent,
      });
      expect(Object.keys(failed!.event.metadata as object)).toEqual(["metadataReduced"]);
    } finally {
      await dropTrigger();
    }
    expect(await verify(tenant)).toMatchObject({ valid: true });
    expect(logged).not.toHaveBeenCalled();
  });
});
