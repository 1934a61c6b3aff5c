import { startPostgres15, type Postgres15 } from "@keyward/test-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../services/debian";
import { spawnKeyward, stopKeyward, type Spawned } from "./spawn";

/** A PostgreSQL cluster of this file's own, which it stops and freezes without disturbing the rest of the run. */
let postgres: Postgres15;
let server: Spawned;

beforeAll(async () => {
  postgres = await startPostgres15({ name: "pg-outage" });
  server = await spawnKeyward({
    DATABASE_URL: postgres.url,
    WORKERS: "1",
    DB_CONNECT_TIMEOUT_MS: "1000",
    DB_STATEMENT_TIMEOUT_MS: "1000",
  });
}, 120_000);

afterAll(async () => {
  if (server) await stopKeyward(server);
  postgres?.stop();
});

/** A request that needs the database, timed, with its status, Retry-After and body. */
const listIdentities = async () => {
  const started = performance.now();
  const res = await fetch(`${server.baseUrl}/api/v1/identities`, {
    headers: { authorization: `Bearer ${server.rootToken}` },
    signal: AbortSignal.timeout(15_000),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    body: await res.json(),
    ms: performance.now() - started,
  };
};

const status = async () => {
  const started = performance.now();
  const res = await fetch(`${server.baseUrl}/api/status`, { signal: AbortSignal.timeout(15_000) });
  return { ...((await res.json()) as { ready: boolean }), ms: performance.now() - started };
};

const logCount = (message: string) => server.logs().filter((line) => line.includes(`"msg":"${message}"`)).length;

const UNAVAILABLE = {
  reqId: expect.stringMatching(/^req-/),
  statusCode: 503,
  error: "ServiceUnavailable",
  message: "The database is unavailable or did not answer in time; please retry shortly",
};

describe("PostgreSQL outages", () => {
  it("answers 503 with Retry-After while the database is stopped, logs the outage once and recovers", async () => {
    expect((await listIdentities()).status).toBe(200);
    const before = logCount("database unavailable");
    postgres.shutDown();
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, listIdentities));
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 503, retryAfter: "2", body: UNAVAILABLE });
      }
      const sequential = [];
      for (let i = 0; i < 10; i++) sequential.push(await listIdentities());
      expect(sequential.map((a) => a.status)).toEqual(Array(10).fill(503));
      const ready = await status();
      expect(ready.ready).toBe(false);
      expect(ready.ms).toBeLessThan(500);
      await waitFor("the outage log line", () => logCount("database unavailable") === before + 1, 5_000);
    } finally {
      await postgres.restart();
    }
    await waitFor("recovery", async () => (await listIdentities()).status === 200, 10_000);
    await waitFor("readiness", async () => (await status()).ready, 5_000);
    expect(logCount("database unavailable")).toBe(before + 1);
    expect(server.logs().some((line) => line.includes("unhandled error"))).toBe(false);
  }, 60_000);

  it("bounds every wait while the database is frozen: 503 within the timeouts, status at once", async () => {
    expect((await listIdentities()).status).toBe(200);
    postgres.freeze();
    try {
      const [answers, statuses] = await Promise.all([
        Promise.all(Array.from({ length: 12 }, listIdentities)),
        (async () => {
          const seen = [];
          for (let i = 0; i < 10; i++) {
            seen.push(await status());
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          return seen;
        })(),
      ]);
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 503, retryAfter: "2", body: UNAVAILABLE });
        // Connection wait 1 s, statement bound 1 s (+1 s on the client side for a server that never answers).
        expect(answer.ms).toBeLessThan(5_000);
      }
      for (const seen of statuses) expect(seen.ms).toBeLessThan(500);
      // Status never waits on the database: it answers from the last check, which a busy machine may
      // finish after the polls above; it turns not ready while the database is still frozen.
      const later: number[] = [];
      await waitFor(
        "status to say not ready",
        async () => {
          const seen = await status();
          later.push(seen.ms);
          return seen.ready === false;
        },
        5_000,
      );
      for (const ms of later) expect(ms).toBeLessThan(500);
    } finally {
      postgres.thaw();
    }
    await waitFor("recovery", async () => (await listIdentities()).status === 200, 10_000);
    await waitFor("readiness", async () => (await status()).ready, 5_000);
  }, 60_000);
});
