import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startJobs } from "../../src/app/jobs";
import { startTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { auditEvents } from "./helpers";
import { signatureValid, startReceiver, waitFor, type Receiver } from "./receiver";

let app: TestApp;
let stopJobs: () => Promise<void>;
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp({
    AUDIT_STREAM_INTERVAL_MS: "50",
    AUDIT_STREAM_TIMEOUT_MS: "1000",
    AUDIT_STREAM_MAX_BACKOFF_MS: "1000",
  });
  stopJobs = startJobs(app.deps, ["audit-streams"]);
  receiver = await startReceiver();
}, 60_000);

afterAll(async () => {
  await stopJobs();
  await receiver.close();
  await app.close();
});

const createStream = async (tenant: Tenant, url = receiver.url()) =>
  expectOk(
    await tenant.admin.auditLogStreams.create({
      params: { provider: "custom" },
      body: { credentials: { url, headers: [{ key: "Authorization", value: "Bearer receiver-api-key" }] } },
    }),
  );

const makeEvents = async (tenant: Tenant, count: number) => {
  for (let i = 0; i < count; i += 1) {
    expectOk(
      await tenant.admin.identities.create({
        body: { name: uniqueName("streamed"), organizationId: tenant.orgId, role: "no-access" },
      }),
    );
  }
};

/** Events of the tenant the receiver got, in arrival order, duplicates removed (delivery is at least once). */
const deliveredOf = (tenant: Tenant) => {
  const seen = new Set<string>();
  const events = receiver.deliveries.flatMap(
    (d) => d.events as unknown as { id: string; orgId: string; seq: string; chainId: string }[],
  );
  return events.filter((e) => e.orgId === tenant.orgId && !seen.has(e.id) && seen.add(e.id));
};

describe("audit log streams", () => {
  it("pings the receiver, hides header values and the secret, and lists, reads, updates and deletes", async () => {
    const tenant = await createTenant(app);
    const pings = receiver.deliveries.length;
    const { auditLogStream, signingSecret } = await createStream(tenant);
    expect(receiver.deliveries.length).toBe(pings + 1);
    expect(receiver.deliveries.at(-1)!.body).toBe('{"ping":"ok"}');
    expect(receiver.deliveries.at(-1)!.headers.authorization).toBe("Bearer receiver-api-key");
    expect(signingSecret.length).toBeGreaterThan(30);
    expect(auditLogStream.credentials).toEqual({ url: receiver.url(), headers: [{ key: "Authorization" }] });
    expect(JSON.stringify(auditLogStream)).not.toContain("receiver-api-key");

    const params = { provider: "custom", logStreamId: auditLogStream.id };
    expect(expectOk(await tenant.admin.auditLogStreams.list()).auditLogStreams.map((s) => s.id)).toEqual([
      auditLogStream.id,
    ]);
    expect(expectOk(await tenant.admin.auditLogStreams.get({ params })).auditLogStream.id).toBe(auditLogStream.id);
    const updated = expectOk(
      await tenant.admin.auditLogStreams.update({ params, body: { credentials: { headers: [] } } }),
    );
    expect(updated.auditLogStream.credentials.headers).toEqual([]);
    expect(expectOk(await tenant.admin.auditLogStreams.options()).providerOptions).toEqual([
      { provider: "custom", name: "Custom" },
    ]);
    expect(expectOk(await tenant.admin.auditLogStreams.delete({ params })).auditLogStream.id).toBe(auditLogStream.id);
    expect((await tenant.admin.auditLogStreams.get({ params })).status).toBe(404);
    const types = (await auditEvents(tenant)).map((e) => e.event.type);
    expect(types).toEqual(
      expect.arrayContaining(["create-audit-log-stream", "update-audit-log-stream", "delete-audit-log-stream"]),
    );
  });

  it("refuses unreachable receivers, unknown providers, strangers and members without settings rights", async () => {
    const tenant = await createTenant(app);
    const unreachable = await tenant.admin.auditLogStreams.create({
      params: { provider: "custom" },
      body: { credentials: { url: "http://127.0.0.1:1/none", headers: [] } },
    });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body).toMatchObject({
      message: expect.stringMatching(/^Failed to connect with upstream source: /),
    });
    const provider = await tenant.admin.auditLogStreams.create({
      params: { provider: "datadog" },
      body: { credentials: { url: receiver.url(), headers: [] } },
    });
    expect(provider.status).toBe(400);

    const { auditLogStream } = await createStream(tenant);
    const stranger = await createTenant(app);
    const params = { provider: "custom", logStreamId: auditLogStream.id };
    expect((await stranger.admin.auditLogStreams.get({ params })).status).toBe(404);
    expect((await stranger.admin.auditLogStreams.delete({ params })).status).toBe(404);
    const member = await createIdentity(tenant, { orgRole: "member" });
    expect(expectOk(await member.client.auditLogStreams.list()).auditLogStreams).toHaveLength(1);
    expect(
      (
        await member.client.auditLogStreams.create({
          params: { provider: "custom" },
          body: { credentials: { url: receiver.url(), headers: [] } },
        })
      ).status,
    ).toBe(403);
    expect((await member.client.auditLogStreams.delete({ params })).status).toBe(403);
    await tenant.admin.auditLogStreams.delete({ params });
  });

  it("deletes a stream while its events are being delivered without a conflict", async () => {
    // Deletion cascades from the stream row to its queued events while the delivery job acknowledges
    // a batch; both must take the two in the same order. A race, so several rounds.
    const tenant = await createTenant(app);
    for (let round = 0; round < 40; round += 1) {
      const { auditLogStream } = await createStream(tenant);
      const params = { provider: "custom", logStreamId: auditLogStream.id };
      expectOk(await tenant.admin.auditLogStreams.update({ params, body: { credentials: { headers: [] } } }));
      expectOk(await tenant.admin.auditLogStreams.delete({ params }));
    }
    expect(expectOk(await tenant.admin.auditLogStreams.list()).auditLogStreams).toEqual([]);
  }, 60_000);

  it("delivers every event, signed and in chain order, after the receiver was down for five longest backoffs", async () => {
    const tenant = await createTenant(app);
    // A stream receives what happens from its creation on.
    const before = new Set((await auditEvents(tenant)).map((e) => e.id));
    const { signingSecret } = await createStream(tenant);
    await makeEvents(tenant, 3);
    await waitFor(() => deliveredOf(tenant).length >= 4, 10_000, "first deliveries");

    await receiver.down();
    // AUDIT_STREAM_MAX_BACKOFF_MS is 1 s here: the sender reaches its longest wait and retries at it.
    const downUntil = Date.now() + 5_000;
    while (Date.now() < downUntil) {
      await makeEvents(tenant, 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await receiver.up();

    const expected = (await auditEvents(tenant, { limit: 1000 })).map((e) => e.id).filter((id) => !before.has(id));
    await waitFor(() => deliveredOf(tenant).length >= expected.length, 20_000, "every event after the outage");
    const delivered = deliveredOf(tenant);
    expect(new Set(delivered.map((e) => e.id))).toEqual(new Set(expected));
    // Within a chain, events arrive in their sequence order.
    const lastSeq = new Map<string, number>();
    for (const event of delivered) {
      const seq = Number(event.seq);
      expect(seq).toBeGreaterThan(lastSeq.get(event.chainId) ?? 0);
      lastSeq.set(event.chainId, seq);
    }
    const ours = receiver.deliveries.filter((d) => d.events.some((e) => expected.includes(e.id)));
    expect(ours.every((d) => signatureValid(d, signingSecret))).toBe(true);
    expect(ours.every((d) => !signatureValid(d, "another-secret"))).toBe(true);
    // The sender clears its outbox once the receiver has answered, so the count catches up a moment after the deliveries.
    const pending = async () => expectOk(await tenant.admin.auditLogStreams.list()).auditLogStreams[0]!.pendingEvents;
    await waitFor(async () => (await pending()) === 0, 10_000, "the outbox cleared").catch(() => undefined);
    expect(await pending()).toBe(0);
  }, 90_000);
});
