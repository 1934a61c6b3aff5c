import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { setupOk } from "./lib/endpoint";
import { freePort, spawnCompiledServer, startPostgres, type Spawned } from "./lib/processes";
import { summariseProfile } from "./lib/profile";
import { serverNodeArgs } from "./lib/keyward";

/**
 * Large folders: folders of 100, 1,000 and 10,000 secrets (values of 20 to 600 bytes, one in ten
 * with a secret reference, three imports of 20 secrets each) listed through v3 and v4 with imports
 * and expanded references, at one connection and at 32, on PostgreSQL, by the compiled server with
 * one worker. Prints p50/p99, the server's CPU time per listed secret, and the peak memory of one
 * list above the idle process, beside the targets:
 * - CPU per listed secret flat: the 10,000 row within 1.3x the 100 row;
 * - the 10,000-secret list at one connection within 400 ms (p50);
 * - the peak memory of one 10,000-secret list at most 2x its response size, in a fresh process and
 *   asked again in a warm one (a large list is streamed: the body itself is never whole in memory).
 *
 * Memory: Linux keeps a process's peak resident size (VmHWM) and resets it to the current size when
 * "5" is written to /proc/<pid>/clear_refs. A fresh server process is started for the memory phase,
 * warmed on a small list, then for each folder size (smallest first, so no larger list has grown the
 * heap before): reset, read VmRSS (idle), one list, read VmHWM. Peak above idle = VmHWM - VmRSS.
 * Memory the heap already holds free from earlier work is reused and not counted, so the figure is
 * what the list made the process take from the system; the same list asked again shows how much of
 * that the process keeps and reuses.
 *
 * Settings: BENCH_LISTED (secrets listed per row, 60,000), BENCH_SIZES (100,1000,10000),
 * BENCH_CONNECTIONS (32), BENCH_PROFILE=<dir> (profile only the largest v4 list at one connection),
 * BENCH_MEMORY_ONLY=1 (only the memory phase), BENCH_BESIDE_ONLY=1 (only the parallel lists with a small
 * read beside them), BENCH_NODE_ARGS and BENCH_SERVER_CPUS (below).
 */
const SIZES = (process.env.BENCH_SIZES ?? "100,1000,10000").split(",").map(Number);
const MANY = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PROFILE = process.env.BENCH_PROFILE;
const TIMED = process.env.BENCH_MEMORY_ONLY !== "1";
const BESIDE_ONLY = process.env.BENCH_BESIDE_ONLY === "1";
const IMPORTS = 3;
const PER_IMPORT = 20;

/** A value of 20 to 600 bytes (deterministic); one in ten references another secret here or in an import. */
const fillerOf = (i: number, length = 20 + ((i * 7919) % 581)) => `v${i}-${"x".repeat(length)}`.slice(0, length);
const valueOf = (i: number) => {
  const length = 20 + ((i * 7919) % 581);
  const filler = fillerOf(i, length);
  if (i % 10 !== 5) return filler;
  const ref = i % 20 === 5 ? `\${S_${i - 1}}` : `\${dev.shared-${i % IMPORTS}.SHARED_${i % IMPORTS}_${i % PER_IMPORT}}`;
  return `${filler.slice(0, Math.max(0, length - ref.length))}${ref}`;
};

const seed = async (admin: KeywardClient) => {
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "folders at scale" } }));
  const scope = { projectId: project.id, environment: "dev" };
  const folders = [...SIZES.map((n) => `f${n}`), ...Array.from({ length: IMPORTS }, (_, i) => `shared-${i}`)];
  for (const name of folders)
    setupOk(await admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name } }));
  const write = async (secretPath: string, secrets: { secretKey: string; secretValue: string }[]) => {
    for (let i = 0; i < secrets.length; i += 1000)
      setupOk(
        await admin.secretsV4.batchCreate({ body: { ...scope, secretPath, secrets: secrets.slice(i, i + 1000) } }),
      );
  };
  for (let i = 0; i < IMPORTS; i += 1)
    await write(
      `/shared-${i}`,
      Array.from({ length: PER_IMPORT }, (_, j) => ({
        secretKey: `SHARED_${i}_${j}`,
        secretValue: fillerOf(j * 3 + 1),
      })),
    );
  for (const size of SIZES) {
    await write(
      `/f${size}`,
      Array.from({ length: size }, (_, i) => ({ secretKey: `S_${i}`, secretValue: valueOf(i) })),
    );
    for (let i = 0; i < IMPORTS; i += 1)
      setupOk(
        await admin.secretImports.create({
          body: {
            workspaceId: project.id,
            environment: "dev",
            path: `/f${size}`,
            import: { environment: "dev", path: `/shared-${i}` },
          },
        }),
      );
  }
  return project.id;
};

const pathOf = (version: "v3" | "v4", projectId: string, size: number) => {
  const flags = `environment=dev&secretPath=%2Ff${size}&include_imports=true&includeImports=true&expandSecretReferences=true`;
  return version === "v3"
    ? `/api/v3/secrets/raw?workspaceId=${projectId}&${flags}`
    : `/api/v4/secrets?projectId=${projectId}&${flags}`;
};

/** The server's CPU time so far in µs (utime + stime of /proc/<pid>/stat, in ticks of 10 ms). */
const cpuTimeUs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};

/**
 * Enough requests per connection to list about BENCH_LISTED secrets in all (60,000), at least one
 * and at most 50 each: a run's work stays about the same whatever the folder's size, and a 10,000
 * list at 32 connections is 32 requests, all answered (a timed run would end before any is).
 */
const LISTED = Number(process.env.BENCH_LISTED ?? 60_000);
const requestsPerConnection = (connections: number, listed: number) =>
  Math.min(50, Math.max(1, Math.round(LISTED / (connections * listed))));

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * `connections` clients each sending `perConnection` requests one after another (keep-alive); the
 * latencies' p50 and p99 and the server's CPU time per request. The body is read, not parsed.
 */
const load = async (
  server: Spawned,
  url: string,
  headers: Record<string, string>,
  connections: number,
  perConnection: number,
) => {
  const latencies: number[] = [];
  let errors = 0;
  const statuses = new Set<number>();
  const before = cpuTimeUs(server.pid);
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let i = 0; i < perConnection; i += 1) {
        const started = performance.now();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        latencies.push(performance.now() - started);
        if (res.status !== 200) {
          errors += 1;
          statuses.add(res.status);
        }
      }
    }),
  );
  const requests = latencies.length;
  const cpuUs = (cpuTimeUs(server.pid) - before) / requests;
  latencies.sort((a, b) => a - b);
  if (errors > 0) console.log(`  ${errors} requests answered ${[...statuses].join(", ")}`);
  return { requests, errors, cpuUs, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
};

/**
 * `MANY` v4 lists of the large folder sent at once (one per connection) while one client reads a
 * single secret of the small folder in a loop until they have all answered; beside that, the same
 * read's p99 on the idle server. Each list's status is kept: all should be 200.
 */
const smallReadBesideLargeLists = async (
  server: Spawned,
  headers: Record<string, string>,
  projectId: string,
  small: number,
  large: number,
) => {
  const readUrl = `${server.url}/api/v4/secrets/S_1?projectId=${projectId}&environment=dev&secretPath=%2Ff${small}`;
  const read = async () => {
    const started = performance.now();
    const res = await fetch(readUrl, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`small read answered ${res.status}`);
    return performance.now() - started;
  };
  // Warmed first, and the lag's maximum reset by a scrape: the idle figures are not the seeding's.
  for (let i = 0; i < 100; i += 1) await read();
  await loopLagMaxMs();
  const idle: number[] = [];
  for (let i = 0; i < 300; i += 1) idle.push(await read());
  const idleLag = await loopLagMaxMs();
  const before = mainThreadMs(server.pid);
  let listing = true;
  const listUrl = `${server.url}${pathOf("v4", projectId, large)}`;
  const started = performance.now();
  const lists = Promise.all(
    Array.from({ length: MANY }, async () => {
      const res = await fetch(listUrl, { headers });
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - started };
    }),
  ).finally(() => (listing = false));
  const loaded: number[] = [];
  while (listing) loaded.push(await read());
  const answers = await lists;
  const after = mainThreadMs(server.pid);
  const loadedLag = await loopLagMaxMs();
  const counts = new Map<number, number>();
  for (const { status } of answers) counts.set(status, (counts.get(status) ?? 0) + 1);
  idle.sort((a, b) => a - b);
  loaded.sort((a, b) => a - b);
  return {
    statuses: [...counts].map(([status, n]) => `${n} x ${status}`).join(", "),
    allOk: answers.every((a) => a.status === 200),
    slowest: Math.max(...answers.map((a) => a.ms)),
    idleP99: percentile(idle, 99),
    loadedP99: percentile(loaded, 99),
    loadedCount: loaded.length,
    loadedP50: percentile(loaded, 50),
    idleLag,
    loadedLag,
    runMs: after.run - before.run,
    waitMs: after.wait - before.wait,
  };
};

const procStatus = (pid: number, field: "VmRSS" | "VmHWM") => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? Number.NaN) * 1024;
};

/**
 * BENCH_SERVER_CPUS: the CPUs the server's threads may run on (taskset's list, e.g. "0"); run the
 * bench itself under `taskset -c 1` too, and PostgreSQL and the clients keep off the server's core.
 */
const SERVER_CPUS = process.env.BENCH_SERVER_CPUS;

const start = async (env: Record<string, string>, nodeArgs: readonly string[] = []) => {
  const spawned = await spawnCompiledServer({ ...env, WORKERS: "1" }, [...serverNodeArgs(), ...nodeArgs]);
  if (SERVER_CPUS) execFileSync("taskset", ["-a", "-p", "-c", SERVER_CPUS, String(spawned.pid)], { stdio: "ignore" });
  return spawned;
};

/**
 * The server's main thread so far: ms on a CPU and ms runnable but waiting for one (schedstat), so a
 * slow read can be told apart from a busy event loop when the machine's cores are all taken.
 */
const mainThreadMs = (pid: number) => {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number);
  return { run: run! / 1e6, wait: wait! / 1e6 };
};

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

const pg = await startPostgres();
// The server's /metrics: the event loop's longest delay since the last scrape (prom-client resets it).
const metricsPort = await freePort();
const env = {
  DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
  DATABASE_URL: pg.url,
  METRICS_PORT: String(metricsPort),
};
const loopLagMaxMs = async () => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? Number.NaN) * 1000;
};
let server: Spawned | undefined;
try {
  const profileDir = PROFILE ? join(PROFILE, "secrets-scale") : undefined;
  server = await start(env, profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []);
  const boot = await createKeywardClient({ baseUrl: server.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  const token = boot.body.identity.credentials.token;
  const headers = { authorization: `Bearer ${token}` };
  const seeding = performance.now();
  const projectId = await seed(createKeywardClient({ baseUrl: server.url, token }));
  console.log(
    `seeded ${SIZES.join(", ")} secrets (+${IMPORTS} imports each) in ${((performance.now() - seeding) / 1000).toFixed(1)} s`,
  );

  const listedOf = new Map<number, number>();
  const bytesOf = new Map<number, number>();
  for (const size of SIZES) {
    const res = await fetch(`${server.url}${pathOf("v4", projectId, size)}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`list of ${size}: ${res.status} ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { secrets: unknown[]; imports: { secrets: unknown[] }[] };
    listedOf.set(size, body.secrets.length + body.imports.reduce((n, i) => n + i.secrets.length, 0));
    bytesOf.set(size, Buffer.byteLength(text));
  }

  const run = (path: string, connections: number, size: number) =>
    load(
      server!,
      `${server!.url}${path}`,
      headers,
      connections,
      requestsPerConnection(connections, listedOf.get(size)!),
    );

  if (profileDir && !BESIDE_ONLY) {
    const size = Math.max(...SIZES);
    const path = `${server.url}${pathOf("v4", projectId, size)}`;
    await load(server, path, headers, 1, 3);
    const started = performance.now();
    const result = await run(pathOf("v4", projectId, size), 1, size);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `v4 list of ${size}, 1 connection (profiled): ${result.requests} requests, p50 ${result.p50.toFixed(1)} ms`,
    );
    await server.stop();
    server = undefined;
    console.log(summariseProfile(profileDir, 30, seconds));
  } else {
    const [small, large] = [Math.min(...SIZES), Math.max(...SIZES)];
    if (TIMED && !BESIDE_ONLY) {
      for (const size of SIZES) await load(server, `${server.url}${pathOf("v4", projectId, size)}`, headers, 1, 3);
      console.log(
        `\nPostgreSQL, compiled server, one worker; after one warm-up pass, about ${LISTED} secrets listed per row`,
      );
      const cpuPerSecret = new Map<string, number>();
      const p50Of = new Map<string, number>();
      for (const version of ["v3", "v4"] as const)
        for (const connections of [1, MANY])
          for (const size of SIZES) {
            const r = await run(pathOf(version, projectId, size), connections, size);
            const listed = listedOf.get(size)!;
            const perSecret = r.cpuUs / listed;
            cpuPerSecret.set(`${version}/${connections}/${size}`, perSecret);
            p50Of.set(`${version}/${connections}/${size}`, r.p50);
            console.log(
              `${version} list of ${String(size).padStart(6)} (${String(listed).padStart(6)} listed, ${mb(bytesOf.get(size)!).padStart(8)})  ` +
                `${String(connections).padStart(2)} conn  ${String(r.requests).padStart(4)} requests  p50 ${r.p50.toFixed(1).padStart(7)} ms  ` +
                `p99 ${r.p99.toFixed(1).padStart(7)} ms  CPU ${perSecret.toFixed(1).padStart(6)} µs/listed secret  errors ${r.errors}`,
            );
            if (r.errors > 0) process.exitCode = 1;
          }
      console.log("\ntargets:");
      for (const version of ["v3", "v4"])
        for (const connections of [1, MANY]) {
          const ratio =
            cpuPerSecret.get(`${version}/${connections}/${large}`)! /
            cpuPerSecret.get(`${version}/${connections}/${small}`)!;
          console.log(
            `  ${version} ${String(connections).padStart(2)} conn: CPU per listed secret ${large} / ${small} = ${ratio.toFixed(2)}x (target <= 1.3x): ${verdict(ratio <= 1.3)}`,
          );
        }
      for (const version of ["v3", "v4"]) {
        const p50 = p50Of.get(`${version}/1/${large}`)!;
        console.log(
          `  ${version} list of ${large} at 1 connection: p50 ${p50.toFixed(1)} ms (target <= 400 ms): ${verdict(p50 <= 400)}`,
        );
      }
    }

    if (TIMED) {
      const beside = await smallReadBesideLargeLists(server, headers, projectId, small, large);
      console.log(
        `\n${MANY} parallel v4 lists of ${large}, with a single-secret read of /f${small} in a loop beside them:` +
          `\n  lists answered: ${beside.statuses}; slowest list ${beside.slowest.toFixed(0)} ms` +
          `\n  small read p50 ${beside.loadedP50.toFixed(1)} ms, p99 ${beside.loadedP99.toFixed(1)} ms beside them (${beside.loadedCount} reads), p99 ${beside.idleP99.toFixed(1)} ms idle` +
          `\n  the event loop held at most ${beside.loadedLag.toFixed(1)} ms beside them, ${beside.idleLag.toFixed(1)} ms idle` +
          `\n  the server's main thread beside them: ${(beside.runMs / 1000).toFixed(1)} s on a CPU, ${(beside.waitMs / 1000).toFixed(1)} s runnable but waiting for one (${((100 * beside.waitMs) / (beside.runMs + beside.waitMs)).toFixed(0)} % of its busy time)`,
      );
      const ratio = beside.loadedP99 / beside.idleP99;
      console.log(
        `  every list answered 200: ${verdict(beside.allOk)}; small read p99 beside / idle = ${ratio.toFixed(2)}x (target <= 2x): ${verdict(ratio <= 2)}`,
      );
      if (!beside.allOk) process.exitCode = 1;
    }

    // Memory, on a fresh process over the same database (see above).
    if (!BESIDE_ONLY) {
      await server.stop();
      server = await start(env);
      for (let i = 0; i < 20; i += 1)
        await (await fetch(`${server.url}${pathOf("v4", projectId, small)}`, { headers })).text();
      console.log("\npeak memory of one v4 list above the idle process (fresh process, VmHWM reset before each):");
      const once = async (size: number) => {
        writeFileSync(`/proc/${server!.pid}/clear_refs`, "5");
        const idle = procStatus(server!.pid, "VmRSS");
        const res = await fetch(`${server!.url}${pathOf("v4", projectId, size)}`, { headers });
        const bytes = (await res.arrayBuffer()).byteLength;
        return { bytes, peak: procStatus(server!.pid, "VmHWM") - idle };
      };
      for (const size of SIZES) {
        const first = await once(size);
        const again = await once(size);
        const ratio = first.peak / first.bytes;
        console.log(
          `  list of ${String(size).padStart(6)}: response ${mb(first.bytes).padStart(8)}, peak above idle ${mb(first.peak).padStart(8)} = ${ratio.toFixed(2)}x` +
            ` (the same list again: ${mb(again.peak)})` +
            (size === large
              ? ` (target <= 2x): fresh ${verdict(ratio <= 2)}, again ${verdict(again.peak / first.bytes <= 2)}`
              : ""),
        );
      }
    }
  }
} finally {
  await server?.stop();
  pg.stop();
}
