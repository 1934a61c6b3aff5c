import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import { startPostgresTarget } from "../test/services/postgres-target";
import { setupOk } from "./lib/endpoint";
import { preparePrivileges } from "./lib/privileges-fixture";
import { freePort, spawnServer, startPostgres, type Spawned } from "./lib/processes";

/**
 * Lease storms. One sql-database dynamic secret on a real PostgreSQL 15 target holds BENCH_LEASES
 * live leases (rows seeded in bulk in Keyward's database, their roles created in bulk on the target,
 * so revocation really drops them). With Keyward stopped, BENCH_DUE of them are made to have expired
 * two minutes ago; on restart the revocation job catches up while a reader measures the privilege
 * read and /api/status. Then the same with two instances sharing the database, and an outage of the
 * target (its root credential refused for BENCH_OUTAGE_S) to show the backoff.
 *
 * Knobs: BENCH_LEASES (20000), BENCH_DUE (5000), BENCH_READERS (4), BENCH_OUTAGE_S (15),
 * BENCH_PROFILE=<dir> (a V8 CPU profile of each instance, written when it stops).
 */
process.env.ALLOW_PRIVATE_OUTBOUND = "loopback";
const LEASES = Number(process.env.BENCH_LEASES ?? 20_000);
const DUE = Number(process.env.BENCH_DUE ?? 5_000);
const READERS = Number(process.env.BENCH_READERS ?? 4);
const OUTAGE_S = Number(process.env.BENCH_OUTAGE_S ?? 15);
const IDLE_S = 8;
const PROFILE = process.env.BENCH_PROFILE;

const stopTarget = await startPostgresTarget();
const targetUrl = new URL(process.env.KEYWARD_TEST_PG_TARGET_URL!);
const keywardPg = await startPostgres();
const dataDir = mkdtempSync(join(tmpdir(), "keyward-bench-"));
const serverEnv = {
  DATABASE_URL: keywardPg.url,
  DATA_DIR: dataDir,
  MAX_LEASE_LIMIT: String(Math.max(LEASES * 2, 10_000)),
  LOG_LEVEL: "error",
};
/** Each instance serves `/metrics` on its own port: the bench reads its event-loop delay. */
const metricsOf = new Map<Spawned, string>();
const startServer = async () => {
  const port = await freePort();
  const server = await spawnServer(
    "bench/servers/keyward.ts",
    { ...serverEnv, METRICS_PORT: String(port) },
    PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`] : [],
  );
  metricsOf.set(server, `http://127.0.0.1:${port}/metrics`);
  return server;
};

/**
 * A control: an idle process measuring its own event-loop delay. What the machine alone (two
 * PostgreSQL servers, the instances, the readers on two cores) does to a loop that waits.
 */
const control = spawn(
  process.execPath,
  [
    "-e",
    `const h = require("node:perf_hooks").monitorEventLoopDelay({ resolution: 10 });
     h.enable();
     process.on("message", () => { process.send(h.max / 1e6); h.reset(); });`,
  ],
  { stdio: ["ignore", "inherit", "inherit", "ipc"] },
);
const controlDelayMax = () =>
  new Promise<number>((resolve) => {
    control.once("message", (max) => resolve(Number(max)));
    control.send("max");
  });

/**
 * The longest the instances' event loops were held (ms) since the last call (Node's delay monitor,
 * reset on each scrape), and the control's over the same time.
 */
const loopDelayMax = async (instances: readonly Spawned[]) => {
  let max = 0;
  const idle = await controlDelayMax();
  for (const server of instances) {
    const text = await (await fetch(metricsOf.get(server)!)).text();
    const match = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
    if (match) max = Math.max(max, Number(match[1]) * 1000);
  }
  return { max, idle };
};
const keywardDb = new pg.Pool({ connectionString: keywardPg.url, max: 2 });
const target = new pg.Pool({ connectionString: targetUrl.toString(), max: 2 });

const percentile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

type Latency = {
  reads: number;
  p50: number;
  p99: number;
  statusMax: number;
  loopMax: number;
  controlMax: number;
  errors: number;
};

/** Readers on the privilege read and a poller on /api/status until `until` resolves. */
const measureWhile = async (
  instances: readonly Spawned[],
  token: string,
  paths: string[],
  until: Promise<unknown>,
): Promise<Latency> => {
  const url = instances[0]!.url;
  let done = false;
  let loopMax = 0;
  let controlMax = 0;
  const sample = async () => {
    const { max, idle } = await loopDelayMax(instances);
    loopMax = Math.max(loopMax, max);
    controlMax = Math.max(controlMax, idle);
  };
  await loopDelayMax(instances);
  void until.finally(() => (done = true));
  const reads: number[] = [];
  let statusMax = 0;
  let errors = 0;
  const timed = async (path: string, auth: boolean) => {
    const start = performance.now();
    const res = await fetch(`${url}${path}`, auth ? { headers: { authorization: `Bearer ${token}` } } : {});
    await res.arrayBuffer();
    if (res.status !== 200) errors += 1;
    return performance.now() - start;
  };
  await Promise.all([
    ...Array.from({ length: READERS }, async (_, worker) => {
      for (let i = worker; !done; i += READERS) reads.push(await timed(paths[i % paths.length]!, true));
    }),
    (async () => {
      while (!done) {
        statusMax = Math.max(statusMax, await timed("/api/status", false));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })(),
    (async () => {
      while (!done) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await sample();
      }
    })(),
    until,
  ]);
  const sorted = reads.sort((a, b) => a - b);
  await sample();
  return {
    reads: reads.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    statusMax,
    loopMax,
    controlMax,
    errors,
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dueCount = async () =>
  Number(
    (
      await keywardDb.query<{ n: string }>(
        "select count(*)::text as n from dynamic_secret_leases where expire_at <= now() or state = 'revoking'",
      )
    ).rows[0]!.n,
  );
const waitDrained = async (timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while ((await dueCount()) > 0) {
    if (Date.now() > deadline) throw new Error(`catch-up did not finish within ${timeoutMs / 1000}s`);
    await sleep(200);
  }
};

/** Make `count` live leases look as if they had expired two minutes ago (Keyward stopped meanwhile). */
const expireSome = (count: number) =>
  keywardDb.query(
    `update dynamic_secret_leases set expire_at = now() - interval '2 minutes'
      where id in (select id from dynamic_secret_leases where expire_at > now() order by id limit $1)`,
    [count],
  );

const revocationLog = async () =>
  (
    await target.query<{ total: string; distinct: string }>(
      "select count(*)::text as total, count(distinct username)::text as distinct from bench.revocations",
    )
  ).rows[0]!;

const lines: string[] = [];
let servers: Spawned[] = [];
try {
  // The target: a root role that may create roles, and a log of every revocation statement run.
  await target.query("create role bench_root login createrole password 'bench-root'");
  await target.query(
    "create schema bench; create table bench.revocations (username text not null, at timestamptz default now())",
  );
  await target.query("grant usage on schema bench to bench_root; grant insert on bench.revocations to bench_root");

  servers = [await startServer()];
  const boot = setupOk(
    await createKeywardClient({ baseUrl: servers[0]!.url }).system.bootstrap({
      body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
    }),
  );
  const token = boot.identity.credentials.token;
  const admin = createKeywardClient({ baseUrl: servers[0]!.url, token });
  const paths = await preparePrivileges(admin);
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "storm" } }));
  const scope = { projectSlug: project.slug, environmentSlug: "dev", path: "/" };
  const { dynamicSecret } = setupOk(
    await admin.dynamicSecrets.create({
      body: {
        ...scope,
        name: "storm",
        defaultTTL: "1h",
        provider: {
          type: "sql-database",
          inputs: {
            client: "postgres",
            host: targetUrl.hostname,
            port: Number(targetUrl.port),
            database: "postgres",
            username: "bench_root",
            password: "bench-root",
            revocationStatement: `INSERT INTO bench.revocations (username) VALUES ('{{username}}'); DROP ROLE IF EXISTS "{{username}}";`,
          },
        },
      },
    }),
  );

  // Seed: lease rows in bulk, named as Keyward names them, and the same roles on the target.
  const seedStart = performance.now();
  const { rows: prefixRow } = await keywardDb.query<{ entity_prefix: string }>(
    "select entity_prefix from dynamic_secrets where id = $1",
    [dynamicSecret.id],
  );
  const prefix = prefixRow[0]!.entity_prefix;
  await keywardDb.query(
    `insert into dynamic_secret_leases (id, dynamic_secret_id, external_entity_id, expire_at, state)
     select id, $1, $2 || '_' || replace(id::text, '-', ''), now() + interval '1 hour', 'active'
       from (select gen_random_uuid() as id from generate_series(1, $3)) s`,
    [dynamicSecret.id, prefix, LEASES],
  );
  const { rows: names } = await keywardDb.query<{ external_entity_id: string }>(
    "select external_entity_id from dynamic_secret_leases where dynamic_secret_id = $1",
    [dynamicSecret.id],
  );
  for (let i = 0; i < names.length; i += 5_000) {
    const chunk = names.slice(i, i + 5_000).map((r) => r.external_entity_id);
    await target.query(
      `do $$ declare n text; begin foreach n in array $arr$${`{${chunk.join(",")}}`}$arr$::text[] loop
         execute format('create role %I login', n); end loop; end $$`,
    );
  }
  console.log(`seeded ${LEASES} leases and roles in ${((performance.now() - seedStart) / 1000).toFixed(1)}s`);

  const idle = await measureWhile(servers, token, paths, sleep(IDLE_S * 1000));
  const row = (label: string, l: Latency) =>
    `${label.padEnd(34)} privilege read p50 ${l.p50.toFixed(1).padStart(6)} ms  p99 ${l.p99.toFixed(1).padStart(6)} ms (${(l.p99 / idle.p99).toFixed(2)}x idle; target <= 3x)   /api/status max ${l.statusMax.toFixed(1).padStart(6)} ms (target <= 100; event loop held at most ${l.loopMax.toFixed(1)} ms, an idle process's ${l.controlMax.toFixed(1)} ms)   reads ${l.reads}  errors ${l.errors}`;
  lines.push(row("idle", idle));

  for (const instances of [1, 2]) {
    for (const server of servers) await server.stop();
    servers = [];
    await expireSome(DUE);
    const before = await revocationLog();
    const restart = performance.now();
    servers = await Promise.all(Array.from({ length: instances }, startServer));
    const start = performance.now();
    const drained = waitDrained(600_000).then(() => performance.now() - start);
    const during = await measureWhile(servers, token, paths, drained);
    const seconds = (await drained) / 1000;
    const after = await revocationLog();
    const revoked = Number(after.total) - Number(before.total);
    const distinct = Number(after.distinct) - Number(before.distinct);
    lines.push(
      `catch-up, ${instances} instance(s): ${DUE} due of ${LEASES} in ${seconds.toFixed(1)}s after listening (${((start - restart) / 1000).toFixed(1)}s to start) = ${(DUE / seconds).toFixed(0)} revocations/s; revocation statements run ${revoked} for ${distinct} roles`,
    );
    lines.push(row(`  during catch-up (${instances} inst.)`, during));
  }

  // Backoff: the target refuses the root credential for OUTAGE_S while leases are due.
  for (const server of servers.slice(1)) await server.stop();
  servers = servers.slice(0, 1);
  await target.query("alter role bench_root password 'refused-for-now'");
  await target.query("select pg_terminate_backend(pid) from pg_stat_activity where usename = 'bench_root'");
  const outageDue = Math.min(DUE, 2_000, LEASES - 2 * DUE);
  await expireSome(outageDue);
  const outageStart = Date.now();
  await sleep(OUTAGE_S * 1000);
  const { rows: failed } = await keywardDb.query<{ leases: string; attempts: string }>(
    "select count(*)::text as leases, coalesce(sum(attempts), 0)::text as attempts from dynamic_secret_leases where status = 'Failed to delete'",
  );
  await target.query("alter role bench_root password 'bench-root'");
  const recovered = Date.now();
  await waitDrained(600_000);
  lines.push(
    `backoff: ${outageDue} due during a ${((recovered - outageStart) / 1000).toFixed(0)}s outage: ${failed[0]!.attempts} failed provider calls on ${failed[0]!.leases} leases (no backoff would be >= ${outageDue}); all revoked ${((Date.now() - recovered) / 1000).toFixed(1)}s after recovery, ${await dueCount()} left due`,
  );
  const log = await revocationLog();
  lines.push(`exactly once overall: ${log.total} revocation statements for ${log.distinct} distinct roles`);
} finally {
  for (const server of servers) await server.stop().catch(() => undefined);
  await keywardDb.end();
  await target.end();
  keywardPg.stop();
  stopTarget();
  control.kill();
}
console.log(`\nlease storm (shared 2-core machine), readers ${READERS}`);
for (const line of lines) console.log(line);
