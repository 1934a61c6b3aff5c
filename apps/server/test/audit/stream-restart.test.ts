import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createKeywardClient } from "@keyward/client";
import { freePort } from "@keyward/test-services";
import { createTestDatabaseUrl } from "../helpers/database";
import { expectOk, uniqueName } from "../helpers/tenant";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";
import { startReceiver, waitFor } from "./receiver";

const servers: Spawned[] = [];
afterAll(async () => {
  for (const server of servers) await stopKeyward(server);
});

/** The real server as a separate process (one, WORKERS=1): it can be killed with SIGKILL like a crashed host. */
const startServer = async (env: Record<string, string>, port: number) => {
  const server = await spawnKeyward({ ...env, LOG_LEVEL: "error", WORKERS: "1" }, { bootstrap: false, port });
  servers.push(server);
  return server;
};

describe("audit log streams across a crash", () => {
  it("delivers everything after the server is killed mid-delivery and restarted", async () => {
    const receiver = await startReceiver();
    const databaseUrl = await createTestDatabaseUrl();
    const env: Record<string, string> = {
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-crash-")),
      ALLOW_PRIVATE_OUTBOUND: "loopback",
      AUDIT_STREAM_INTERVAL_MS: "100",
      AUDIT_STREAM_TIMEOUT_MS: "2000",
      AUDIT_STREAM_MAX_BACKOFF_MS: "1000",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    const port = await freePort();
    let server = await startServer(env, port);
    const client = (token?: string) => createKeywardClient({ baseUrl: server.baseUrl, token });
    const boot = expectOk(
      await client().system.bootstrap({
        body: { email: "admin@keyward.test", password: "bootstrap-password", organization: "Crash" },
      }),
    );
    const root = client(boot.identity.credentials.token);
    const orgId = boot.organization.id;
    const sinceAnHour = { startDate: new Date(Date.now() - 3_600_000).toISOString(), limit: 1000 };
    // A stream receives what happens from its creation on.
    const before = new Set(expectOk(await root.auditLogs.list({ query: sinceAnHour })).auditLogs.map((e) => e.id));
    expectOk(
      await root.auditLogStreams.create({
        params: { provider: "custom" },
        body: { credentials: { url: receiver.url(), headers: [] } },
      }),
    );
    receiver.setMode("hold");
    for (let i = 0; i < 5; i += 1) {
      expectOk(
        await root.identities.create({
          body: { name: uniqueName("before"), organizationId: orgId, role: "no-access" },
        }),
      );
    }
    await waitFor(() => receiver.heldCount() > 0, 20_000, "a delivery in flight");
    await stopKeyward(server);
    receiver.setMode("up");

    server = await startServer(env, port);
    const again = createKeywardClient({ baseUrl: server.baseUrl, token: boot.identity.credentials.token });
    for (let i = 0; i < 3; i += 1) {
      expectOk(
        await again.identities.create({
          body: { name: uniqueName("after"), organizationId: orgId, role: "no-access" },
        }),
      );
    }
    const expected = expectOk(await again.auditLogs.list({ query: sinceAnHour }))
      .auditLogs.map((e) => e.id)
      .filter((id) => !before.has(id));
    expect(expected.length).toBeGreaterThanOrEqual(9);
    await waitFor(
      () => expected.every((id) => receiver.eventIds().includes(id)),
      30_000,
      "every event at the receiver",
    );
    expect(new Set(receiver.eventIds().filter((id) => !before.has(id)))).toEqual(new Set(expected));
    await stopKeyward(server);
    await receiver.close();
  }, 150_000);
});
