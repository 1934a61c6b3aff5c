import { request } from "node:http";
import { createFreshDatabase } from "@keyward/test-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, waitFor } from "../services/debian";
import { expectOk } from "../helpers/tenant";
import { spawnKeyward, stopKeyward, workerPids as workerPidsOf, type Spawned } from "./spawn";

let server: Spawned;
let metricsPort: number;

beforeAll(async () => {
  // A database of its own on the PostgreSQL the global setup started for the run.
  const targetUrl = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!targetUrl) throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup did not start PostgreSQL");
  const databaseUrl = await createFreshDatabase(targetUrl, "keyward_cluster");
  metricsPort = await freePort();
  server = await spawnKeyward({
    DATABASE_URL: databaseUrl,
    WORKERS: "2",
    SHUTDOWN_TIMEOUT_MS: "5000",
    METRICS_PORT: String(metricsPort),
  });
}, 180_000);

afterAll(async () => {
  if (server) await stopKeyward(server);
});

const workerPids = () => workerPidsOf(server);

/** A request on a connection of its own, so the primary hands consecutive requests to alternating workers. */
const getOnNewConnection = (path: string, token: string) =>
  new Promise<number>((resolve, reject) => {
    request(
      { host: "127.0.0.1", port: server.port, path, agent: false, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    )
      .on("error", reject)
      .end();
  });

describe("WORKERS=2 on PostgreSQL", () => {
  it("serves from two worker processes and a revoked token stops working in both within a second", async () => {
    expect(workerPids()).toHaveLength(2);
    const root = server.client(server.rootToken);
    const { identity } = expectOk(
      await root.identities.create({
        body: { name: "revoked-everywhere", organizationId: server.orgId, role: "admin" },
      }),
    );
    expectOk(await root.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
    const { accessToken } = expectOk(
      await root.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }),
    );
    const path = `/api/v1/identities/${identity.id}`;
    // Both workers authenticate (and cache) the token.
    for (let i = 0; i < 8; i++) expect(await getOnNewConnection(path, accessToken)).toBe(200);
    expectOk(await server.client().accessTokens.revoke({ body: { accessToken } }));
    const revokedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_100 - (Date.now() - revokedAt))));
    const after = [];
    for (let i = 0; i < 8; i++) after.push(await getOnNewConnection(path, accessToken));
    expect(after).toEqual(Array(8).fill(401));
  }, 60_000);

  it("serves Prometheus metrics summed over the workers, by route template, without ids or tokens", async () => {
    const root = server.client(server.rootToken);
    const { identity } = expectOk(
      await root.identities.create({ body: { name: "counted", organizationId: server.orgId, role: "no-access" } }),
    );
    const path = `/api/v1/identities/${identity.id}`;
    for (let i = 0; i < 10; i++) expect(await getOnNewConnection(path, server.rootToken)).toBe(200);
    // The primary asks every worker over IPC; on a starved machine one may miss prom-client's 5 s bound.
    let text = "";
    await waitFor(
      "aggregated metrics",
      async () => {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        text = await res.text();
        return res.status === 200;
      },
      30_000,
    );
    const line = text
      .split("\n")
      .find((l) =>
        l.startsWith('keyward_http_requests_total{route="/api/v1/identities/:identityId",method="GET",status="200"}'),
      );
    expect(Number(line?.split(" ").at(-1))).toBeGreaterThanOrEqual(10);
    expect(text).toContain("keyward_http_request_duration_seconds_bucket");
    expect(text).toMatch(/keyward_db_pool_connections\{state="total"\} \d+/);
    expect(text).toContain("keyward_lease_revocation_lag_seconds");
    expect(text).not.toContain(identity.id);
    expect(text).not.toContain(server.rootToken);
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(404);
  }, 60_000);

  it("replaces a worker that dies", async () => {
    const before = workerPids();
    process.kill(before[0]!, "SIGKILL");
    await waitFor(
      "a replacement worker",
      () => {
        const now = workerPids();
        return now.length === 2 && !now.includes(before[0]!);
      },
      30_000,
    );
    await waitFor("both workers serving", async () => (await getOnNewConnection("/api/status", "")) === 200, 30_000);
    for (let i = 0; i < 6; i++) expect(await getOnNewConnection("/api/status", "")).toBe(200);
  }, 60_000);

  it("drains every worker on SIGTERM and exits cleanly within the shutdown timeout", async () => {
    const pids = workerPids();
    const started = Date.now();
    server.child.kill("SIGTERM");
    const [code] = await server.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000 + 5_000);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  }, 60_000);
});

describe("WORKERS=2 on PORT=0", () => {
  it("the workers share the port the system picked, and the primary names that port", async () => {
    const databaseUrl = await createFreshDatabase(process.env.KEYWARD_TEST_PG_TARGET_URL!, "keyward_cluster");
    const picked = await spawnKeyward({ DATABASE_URL: databaseUrl, WORKERS: "2", PORT: "0" }, { wait: false });
    try {
      let url = "";
      await waitFor(
        "the primary's announcement",
        () => {
          if (picked.child.exitCode !== null) throw new Error(`server exited: ${picked.stderr()}`);
          // Not set up yet: the primary's warning names the URL it serves.
          const line = picked.logs().find((l) => l.includes("keyward is not set up yet"));
          url = line ? ((JSON.parse(line) as { url: string }).url ?? "") : "";
          return url !== "";
        },
        60_000,
      );
      const port = Number(new URL(url).port);
      expect(port).toBeGreaterThan(0);
      for (let i = 0; i < 4; i++)
        expect((await fetch(`${url}/api/status`, { headers: { connection: "close" } })).status).toBe(200);
      expect(workerPidsOf(picked)).toHaveLength(2);
    } finally {
      await stopKeyward(picked);
    }
  }, 60_000);
});
