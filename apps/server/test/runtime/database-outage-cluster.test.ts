import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { startPostgres15, type Postgres15 } from "@keyward/test-services";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../services/debian";
import { spawnKeyward, stopKeyward, workerPids, type Spawned } from "./spawn";

/**
 * Two instances of two workers each on a PostgreSQL cluster of this file's own, which it stops,
 * starts and cuts connections of under load.
 */
let postgres: Postgres15;
let a: Spawned;
let b: Spawned;
const spawned: Spawned[] = [];

/** Short bounds, so an outage shows within a second and a start-up's next attempt comes soon. */
const ENV = {
  WORKERS: "2",
  DB_CONNECT_TIMEOUT_MS: "1000",
  DB_STATEMENT_TIMEOUT_MS: "1000",
  DB_START_RETRY_MAX_MS: "500",
  SHUTDOWN_TIMEOUT_MS: "2000",
};

const start = async (options: { bootstrap?: boolean; wait?: boolean } = {}) => {
  const server = await spawnKeyward({ DATABASE_URL: postgres.url, ...ENV }, options);
  spawned.push(server);
  return server;
};

/** Identities the load renames, one per writing connection. */
let renamed: string[] = [];

beforeAll(async () => {
  postgres = await startPostgres15({ name: "pg-outage-cluster" });
  // Both primaries migrate at once: one waits for the other's migration lock, then finds nothing to do.
  [a, b] = await Promise.all([start(), start({ bootstrap: false })]);
  const root = a.client(a.rootToken);
  renamed = await Promise.all(
    Array.from({ length: 4 }, async (_, i) => {
      const res = await root.identities.create({
        body: { name: `renamed-${i}`, organizationId: a.orgId, role: "no-access" },
      });
      if (res.status !== 200) throw new Error(`identity not created: ${res.status}`);
      return res.body.identity.id;
    }),
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(spawned.map(stopKeyward));
  postgres?.stop();
});

const PATH = "/api/v1/identities";

type Tally = { statuses: Map<number, number>; failures: string[] };

const count = (tally: Tally, status: number) => tally.statuses.get(status) ?? 0;

const failureOf = (error: unknown) => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? String(error);
};

/**
 * Requests sent back to back on four keep-alive connections to each server, until stopped: three
 * read identities (one statement each), one renames an identity (a transaction of several).
 */
const underLoad = (servers: Spawned[]) => {
  const tally: Tally = { statuses: new Map(), failures: [] };
  let running = true;
  let renames = 0;
  const send = (server: Spawned, connection: number) => {
    const headers = { authorization: `Bearer ${a.rootToken}`, "content-type": "application/json" };
    const signal = AbortSignal.timeout(15_000);
    if (connection > 0) return fetch(`${server.baseUrl}${PATH}`, { headers, signal });
    const id = renamed[servers.indexOf(server) % renamed.length];
    const body = JSON.stringify({ name: `renamed-${(renames += 1)}` });
    return fetch(`${server.baseUrl}${PATH}/${id}`, { method: "PATCH", headers, body, signal });
  };
  const loops = servers.flatMap((server) =>
    Array.from({ length: 4 }, async (_, connection) => {
      while (running) {
        try {
          const res = await send(server, connection);
          await res.arrayBuffer();
          tally.statuses.set(res.status, count(tally, res.status) + 1);
        } catch (error) {
          tally.failures.push(failureOf(error));
        }
      }
    }),
  );
  return {
    tally,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return tally;
    },
  };
};

/** A request on a connection of its own, so the primary hands it to the next worker in turn. */
const onNewConnection = (server: Spawned) =>
  new Promise<number>((resolve, reject) => {
    request(
      {
        host: "127.0.0.1",
        port: server.port,
        path: PATH,
        agent: false,
        headers: { authorization: `Bearer ${a.rootToken}` },
        timeout: 15_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    )
      .on("error", reject)
      .on("timeout", () => reject(new Error("timed out")))
      .end();
  });

const readiness = async (server: Spawned) =>
  ((await (await fetch(`${server.baseUrl}/api/status`)).json()) as { ready: boolean }).ready;

/** The primary's lines about a worker that exited (killed, crashed, or failed to start). */
const deaths = (server: Spawned) => server.logs().filter((line) => /worker (died|exited)/.test(line)).length;

const sorted = (pids: number[]) => [...pids].sort((x, y) => x - y);

/** Every server answers 200 on new connections again (each worker in turn). */
const serving = async (servers: Spawned[]) => {
  for (const server of servers) for (let i = 0; i < 4; i++) if ((await onNewConnection(server)) !== 200) return false;
  return true;
};

/** The measurements of a run under load, in the test's output. */
const report = (what: string, tally: Tally, ms: number) =>
  console.info(
    `${what}: ${JSON.stringify({
      ms,
      statuses: Object.fromEntries(tally.statuses),
      resets: tally.failures.length,
      workerDeaths: deaths(a) + deaths(b),
    })}`,
  );

describe("PostgreSQL outages under load, two instances of WORKERS=2", () => {
  it("answers every request with 200 or 503 through a stop and start of PostgreSQL; no worker dies", async () => {
    const pids = [sorted(workerPids(a)), sorted(workerPids(b))];
    expect(pids.map((p) => p.length)).toEqual([2, 2]);
    const began = Date.now();
    const load = underLoad([a, b]);
    await waitFor("the load served", () => count(load.tally, 200) >= 40, 30_000);
    postgres.shutDown();
    const stoppedAt = Date.now();
    try {
      await waitFor("503s", () => count(load.tally, 503) >= 40, 20_000);
      // Long enough for the pools and the LISTEN connections to fail and retry more than once.
      await sleep(Math.max(0, 3_000 - (Date.now() - stoppedAt)));
    } finally {
      await postgres.restart();
    }
    const before = count(load.tally, 200);
    await waitFor("both instances serving again", () => serving([a, b]), 30_000);
    await waitFor("the load served again", () => count(load.tally, 200) >= before + 40, 30_000);
    const tally = await load.stop();
    report("outage", tally, Date.now() - began);
    expect(tally.failures).toEqual([]);
    expect([...tally.statuses.keys()].sort()).toEqual([200, 503]);
    expect(deaths(a) + deaths(b)).toBe(0);
    expect([sorted(workerPids(a)), sorted(workerPids(b))]).toEqual(pids);
  }, 120_000);

  it("survives every connection being terminated, the LISTEN connections included", async () => {
    const pids = [sorted(workerPids(a)), sorted(workerPids(b))];
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    const began = Date.now();
    const load = underLoad([a, b]);
    try {
      await waitFor("the load served", () => count(load.tally, 200) >= 40, 30_000);
      // Three jobs listen in each of the four workers (reconnected since the last test's outage).
      await waitFor("every LISTEN connection", async () => {
        const listening = await admin.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where application_name = 'keyward-listen'",
        );
        return listening.rows[0]?.n === 12;
      });
      for (let i = 0; i < 3; i++) {
        await admin.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend'",
        );
        await sleep(300);
      }
    } finally {
      await admin.end();
    }
    const before = count(load.tally, 200);
    await waitFor("both instances serving again", () => serving([a, b]), 30_000);
    await waitFor("the load served again", () => count(load.tally, 200) >= before + 40, 30_000);
    const tally = await load.stop();
    report("terminated connections", tally, Date.now() - began);
    expect(tally.failures).toEqual([]);
    expect([...tally.statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(deaths(a) + deaths(b)).toBe(0);
    expect([sorted(workerPids(a)), sorted(workerPids(b))]).toEqual(pids);
  }, 120_000);

  it("replaces workers killed while PostgreSQL is down with ones that serve 503, then 200; a new primary waits to migrate", async () => {
    postgres.shutDown();
    let c: Spawned | undefined;
    let replacements: number[] = [];
    try {
      await waitFor("b answering 503", async () => (await onNewConnection(b)) === 503, 20_000);
      const killed = workerPids(b);
      for (const pid of killed) process.kill(pid, "SIGKILL");
      c = await start({ wait: false });
      await waitFor(
        "two replacement workers",
        () => {
          const now = workerPids(b);
          return now.length === 2 && !now.some((pid) => killed.includes(pid));
        },
        30_000,
      );
      // Both workers were killed: whatever answers now is a replacement.
      await waitFor("the replacements answering 503", async () => (await onNewConnection(b)) === 503, 60_000);
      for (let i = 0; i < 6; i++) expect(await onNewConnection(b)).toBe(503);
      expect(await readiness(b)).toBe(false);
      replacements = sorted(workerPids(b));
      await waitFor("c waiting for the database", () => c!.logs().some((l) => l.includes("waiting for the database")));
      expect(c.child.exitCode).toBeNull();
    } finally {
      await postgres.restart();
    }
    await waitFor("b serving again", () => serving([b]), 30_000);
    await waitFor("b ready", () => readiness(b), 5_000);
    expect(sorted(workerPids(b))).toEqual(replacements);
    // The two killed, and none since.
    expect(deaths(b)).toBe(2);
    expect(deaths(a)).toBe(0);
    await waitFor("c serving", () => serving([c]), 60_000);
    expect(deaths(c)).toBe(0);
    expect(c.stderr()).toBe("");
  }, 180_000);
});
