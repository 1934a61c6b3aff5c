import { createFreshDatabase } from "@keyward/test-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeywardClient } from "@keyward/client";
import { eventData, isEvent, openEventStream } from "../helpers/event-stream";
import { expectOk, uniqueName } from "../helpers/tenant";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";

/** Two server processes on one PostgreSQL database, as two instances behind a load balancer. */
/**
 * Server processes on a PostgreSQL database of their own: run in the suite's PostgreSQL pass (the
 * PGlite pass would run the very same thing again).
 */
const onPostgres = process.env.DATABASE_URL !== undefined;
let a: Spawned;
let b: Spawned;
let databaseUrl: string;
let projectId: string;
const env = () => ({ DATABASE_URL: databaseUrl, EVENTS_PING_INTERVAL_S: "0.5", EVENTS_RECHECK_INTERVAL_S: "0.5" });

beforeAll(async () => {
  if (!onPostgres) return;
  const targetUrl = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!targetUrl) throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup did not start PostgreSQL");
  databaseUrl = await createFreshDatabase(targetUrl, "keyward_events");
  a = await spawnKeyward(env());
  b = await spawnKeyward(env(), { bootstrap: false });
  const root = a.client(a.rootToken);
  projectId = expectOk(
    await root.projects.create({ body: { projectName: uniqueName("events"), type: "secret-manager" } }),
  ).project.id;
  expectOk(await root.folders.create({ body: { workspaceId: projectId, environment: "dev", path: "/", name: "app" } }));
}, 180_000);

afterAll(async () => {
  if (!onPostgres) return;
  await Promise.all([a && stopKeyward(a), b && stopKeyward(b)]);
});

const register = [
  { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/app" } },
  { event: "secret:update", conditions: { environmentSlug: "dev", secretPath: "/app" } },
];

const create = (server: Spawned, token: string, key: string) =>
  server.client(token).secretsV4.create({
    params: { secretName: key },
    body: { projectId, environment: "dev", secretPath: "/app", secretValue: "value" },
  });

describe.runIf(onPostgres)("the events stream across server processes on one PostgreSQL", () => {
  it("a change made through one instance reaches a subscriber of the other within a second", async () => {
    const stream = await openEventStream(b.baseUrl, a.rootToken, { projectId, register });
    try {
      const started = Date.now();
      expectOk(await create(a, a.rootToken, "CROSS_INSTANCE"));
      const event = await stream.next(isEvent, 1_000);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(eventData(event).data.payload).toEqual([
        { environment: "dev", secretPath: "/app", secretKeys: "CROSS_INSTANCE", secretKey: "CROSS_INSTANCE" },
      ]);
    } finally {
      stream.close();
    }
  });

  it("a token revoked on one instance ends its stream on the other", async () => {
    const root = a.client(a.rootToken);
    const { identity } = expectOk(
      await root.identities.create({ body: { name: uniqueName("watcher"), organizationId: a.orgId, role: "member" } }),
    );
    expectOk(await root.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
    const { accessToken } = expectOk(
      await root.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }),
    );
    expectOk(
      await root.projects.addIdentityMembership({
        params: { projectId, identityId: identity.id },
        body: { role: "member" },
      }),
    );
    const stream = await openEventStream(b.baseUrl, accessToken, { projectId, register });
    expect(stream.status).toBe(200);
    expectOk(await createKeywardClient({ baseUrl: a.baseUrl }).accessTokens.revoke({ body: { accessToken } }));
    const error = await stream.next((frame) => frame.event === "error", 5_000);
    expect(JSON.parse(error.data!)).toEqual({ message: "Permission denied or refresh failed" });
    await stream.ended;
  });

  it("a subscriber whose instance restarts reconnects with Last-Event-ID and misses nothing, twice nothing", async () => {
    const first = await openEventStream(b.baseUrl, a.rootToken, { projectId, register });
    expectOk(await create(a, a.rootToken, "BEFORE_RESTART"));
    const seen = await first.next(isEvent);
    b.child.kill("SIGTERM");
    // The instance ends its streams as it shuts down, telling clients to reconnect.
    const goodbye = await first.next((frame) => frame.event === "error", 10_000);
    expect(goodbye.data).toMatch(/Last-Event-ID/);
    await first.ended;
    await b.exited;
    expectOk(await create(a, a.rootToken, "DURING_RESTART_1"));
    expectOk(await create(a, a.rootToken, "DURING_RESTART_2"));
    b = await spawnKeyward(env(), { bootstrap: false });
    const again = await openEventStream(b.baseUrl, a.rootToken, { projectId, register }, { "last-event-id": seen.id! });
    try {
      expectOk(await create(a, a.rootToken, "AFTER_RESTART"));
      const keys: string[] = [];
      const ids: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const event = await again.next(isEvent, 5_000);
        keys.push(...(eventData(event).data.payload as { secretKey: string }[]).map((p) => p.secretKey));
        ids.push(Number(event.id));
      }
      expect(keys).toEqual(["DURING_RESTART_1", "DURING_RESTART_2", "AFTER_RESTART"]);
      expect(ids).toEqual([Number(seen.id) + 1, Number(seen.id) + 2, Number(seen.id) + 3]);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(again.frames.filter(isEvent)).toHaveLength(3);
    } finally {
      again.close();
    }
    // An instance stopped and started again: on a busy machine the start alone can take most of 30 s.
  }, 90_000);
});
