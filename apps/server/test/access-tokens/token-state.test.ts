import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startJobs } from "../../src/app/jobs";
import { flushTokenUses } from "../../src/modules/access-tokens/token-use.job";
import { waitFor } from "../services/debian";
import { startTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createProject, createTenant, type Tenant, type TestIdentity } from "../helpers/tenant";

let app: TestApp;
let stopJobs: () => Promise<void>;
let tenant: Tenant;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  stopJobs = startJobs(app.deps, ["token-state"]);
  await waitFor("the token state notices heard", () => app.deps.tokenCache.following(), 10_000);
  tenant = await createTenant(app);
  projectId = (await createProject(tenant)).id;
});
afterAll(async () => {
  await stopJobs();
  await app.close();
});

const read = async (identity: TestIdentity) =>
  (await identity.client.secretsV4.list({ query: { projectId, environment: "dev", secretPath: "/" } })).status;

const viewer = () => createIdentity(tenant, { projectId, projectRole: "viewer" });

/**
 * With the app's clock stopped, a cached token never outlives its lifetime by itself: only a
 * notice from the database can make the next request look it up again.
 */
const withClockStopped = async (run: () => Promise<void>) => {
  const now = app.deps.clock.now();
  const stopped = vi.spyOn(app.deps.clock, "now").mockReturnValue(now);
  try {
    await run();
  } finally {
    stopped.mockRestore();
  }
};

const CHANGES: [what: string, change: (identity: TestIdentity) => Promise<unknown>, status: number][] = [
  [
    "the token revoked",
    (identity) =>
      sql`update identity_access_tokens set is_revoked = true where identity_id = ${identity.id}`.execute(app.deps.db),
    401,
  ],
  [
    "its auth method's trusted IPs narrowed",
    (identity) =>
      sql`update identity_auth_configs set access_token_trusted_ips = ${JSON.stringify([{ ipAddress: "10.0.0.0", type: "ipv4", prefix: 8 }])}::jsonb
        where identity_id = ${identity.id}`.execute(app.deps.db),
    403,
  ],
  [
    "its auth method removed",
    (identity) => sql`delete from identity_auth_configs where identity_id = ${identity.id}`.execute(app.deps.db),
    401,
  ],
  [
    "the identity deleted",
    (identity) => sql`delete from identities where id = ${identity.id}`.execute(app.deps.db),
    401,
  ],
];

describe("machine tokens kept until the database notes a change", () => {
  it.each(CHANGES)(
    "a cached token is refused once %s commits, whoever made the change",
    async (_what, change, status) => {
      const identity = await viewer();
      expect(await read(identity)).toBe(200);
      await withClockStopped(async () => {
        expect(await read(identity)).toBe(200);
        // Straight to the database: no service clears this process's cache, only the notice does.
        await change(identity);
        await waitFor("the change noticed", async () => (await read(identity)) === status, 10_000);
      });
    },
  );

  it("drops only the renewed token on a renewal, and the renewed token still reads", async () => {
    const [renewed, other] = [await viewer(), await viewer()];
    expect(await read(renewed)).toBe(200);
    expect(await read(other)).toBe(200);
    await withClockStopped(async () => {
      const held = app.deps.tokenCache.size();
      expect(held).toBeGreaterThanOrEqual(2);
      await sql`update identity_access_tokens set last_renewed_at = now() where identity_id = ${renewed.id}`.execute(
        app.deps.db,
      );
      await waitFor("the renewal noticed", () => app.deps.tokenCache.size() === held - 1, 10_000);
      expect(await read(renewed)).toBe(200);
      expect(await read(other)).toBe(200);
      expect(app.deps.tokenCache.size()).toBe(held);
    });
  });

  it("sends no notice for last-used times and spent uses", async () => {
    const identity = await viewer();
    expect(await read(identity)).toBe(200);
    await withClockStopped(async () => {
      const held = app.deps.tokenCache.size();
      expect(held).toBeGreaterThan(0);
      await flushTokenUses(app.deps);
      await sql`update identity_access_tokens set last_used_at = now(), access_token_num_uses = access_token_num_uses + 1
        where identity_id = ${identity.id}`.execute(app.deps.db);
      // Notices arrive in commit order: one sent after these writes marks that any for them arrived.
      const other = await viewer();
      expect(app.deps.tokenCache.size()).toBe(held);
      await sql`update identities set name = name where id = ${other.id}`.execute(app.deps.db);
      await waitFor("the later notice", () => app.deps.tokenCache.size() === 0, 10_000);
    });
  });

  it.runIf(Boolean(process.env.DATABASE_URL))(
    "drops every cached token when its listening connection is lost, and listens again",
    async () => {
      const identity = await viewer();
      expect(await read(identity)).toBe(200);
      expect(app.deps.tokenCache.size()).toBeGreaterThan(0);
      await withClockStopped(async () => {
        await sql`select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'keyward-listen' and datname = current_database()`.execute(app.deps.db);
        await waitFor("the cache dropped", () => app.deps.tokenCache.size() === 0, 10_000);
        await waitFor("listening again", () => app.deps.tokenCache.following(), 15_000);
        // Still heard after the reconnect.
        expect(await read(identity)).toBe(200);
        await sql`update identity_access_tokens set is_revoked = true where identity_id = ${identity.id}`.execute(
          app.deps.db,
        );
        await waitFor("the revocation noticed", async () => (await read(identity)) === 401, 10_000);
      });
    },
  );
});
