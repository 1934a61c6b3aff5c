import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import { abilityOfGrants, type Grant } from "../src/modules/authz/grants";
import { secretObject } from "../src/modules/secrets/secret-access";
import { identityThroughApi, prepareProject, readPath, seedIdentities } from "./lib/identities-seed";
import { benchSettings, startKeyward, type BenchTarget } from "./lib/keyward";
import { allManyRules, prepareManyRules } from "./lib/many-rules";
import { freePort } from "./lib/processes";
import { summariseProfile } from "./lib/profile";
import { ensureWrk, measureInterleaved, median, type LoadResult } from "./lib/wrk";

/**
 * Many identities: Keyward on PostgreSQL with 100 and with 100,000 machine identities, each with a
 * Universal Auth client secret and a live access token (seeded in bulk as the API writes them:
 * hashes only). Both servers are measured in turn, round after round:
 * - Universal Auth login p50/p99 at 1 and 32 connections, logins spread over the whole set;
 * - an authenticated secret read at 32 connections, each request with the next identity's token:
 *   at 100,000 the first pass over the identities looks every token and every ability up (each is
 *   kept until something changes it); with BENCH_WARMUP=40 the warm-up makes that pass (at
 *   ~4,000 req/s) and the rounds measure the steady state, every identity's token and ability cached;
 * - RSS and the caches' sizes (the `keyward_cache_entries` gauge) after the reads.
 * Targets: login p99 and read throughput at 100,000 unchanged from 100 (within 10%); caches at
 * most their bound. Then an identity with 1,000 rules (two custom roles, a group's role and four
 * additional privileges) beside one with a single rule: the permission work per request,
 * in-process and as the server's CPU per request. Target: <= 50 µs per request.
 */
const SIZES = (process.env.BENCH_IDENTITIES ?? "100,100000").split(",").map(Number);
/** BENCH_PHASES: which of login, read and rules to run (all by default). */
const PHASES = new Set((process.env.BENCH_PHASES ?? "login,read,rules").split(","));
const LOGIN_SPREAD = 1_000;
const settings = benchSettings();
const dir = mkdtempSync(join(tmpdir(), "keyward-idscale-"));

type Scale = { size: number; target: BenchTarget; metricsUrl: string; readScript: string; loginScript: string };

const luaLines = (name: string, lines: string[]) => {
  const file = join(dir, name);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
};

/** A wrk script sending each request with the next line of `file` (a token or a login body), from a random line on. */
const rotatingLua = (name: string, file: string, request: string) =>
  luaLines(`${name}.lua`, [
    "local items = {}",
    `for line in io.lines(${JSON.stringify(file)}) do items[#items + 1] = line end`,
    // Each wrk run starts at a random place, so the rounds together cycle through the whole set.
    "math.randomseed(os.time())",
    "local i = math.random(#items) - 1",
    "request = function()",
    "  i = i % #items + 1",
    `  ${request}`,
    "end",
  ]);

/** BENCH_PROFILE=<dir>: the compiled servers under V8's profiler, one profile per scale in `<dir>/<size>`. */
const profileDir = process.env.BENCH_PROFILE;

const prepareScale = async (size: number): Promise<Scale> => {
  const metricsPort = await freePort();
  const target = await startKeyward("postgres", {
    env: { RATE_LIMIT_LOGIN: "0", METRICS_PORT: String(metricsPort) },
    ...(profileDir
      ? { compiled: true, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, String(size))}`] }
      : {}),
  });
  const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
  const scope = await prepareProject(admin);
  const template = await identityThroughApi(admin, target.url, scope, "template");
  const started = performance.now();
  const seeded = await seedIdentities(target.databaseUrl!, template, scope.projectId, size);
  console.log(`${size} identities seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const path = readPath(scope.projectId);
  // The seeded rows must work as the API's: the last one reads, the first one logs in.
  const check = await fetch(`${target.url}${path}`, { headers: { authorization: `Bearer ${seeded.at(-1)!.token}` } });
  const login = await fetch(`${target.url}/api/v1/auth/universal-auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ clientId: seeded[0]!.clientId, clientSecret: seeded[0]!.clientSecret }),
  });
  if (check.status !== 200 || login.status !== 200)
    throw new Error(`seeded rows refused: ${check.status} ${login.status}`);
  const tokens = luaLines(
    `tokens-${size}`,
    seeded.map((s) => s.token),
  );
  const step = Math.max(1, Math.floor(size / LOGIN_SPREAD));
  const bodies = luaLines(
    `logins-${size}`,
    seeded
      .filter((_, i) => i % step === 0)
      .map(({ clientId, clientSecret }) => JSON.stringify({ clientId, clientSecret })),
  );
  return {
    size,
    target,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    readScript: rotatingLua(
      `read-${size}`,
      tokens,
      `return wrk.format("GET", ${JSON.stringify(path)}, { ["Authorization"] = "Bearer " .. items[i] })`,
    ),
    loginScript: rotatingLua(
      `login-${size}`,
      bodies,
      `return wrk.format("POST", "/api/v1/auth/universal-auth/login", { ["Content-Type"] = "application/json" }, items[i])`,
    ),
  };
};

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) / 1024;

/** The caches' sizes and the V8 heap in use (MiB), from the metrics endpoint. */
const cacheSizes = async (url: string) => {
  const text = await (await fetch(url)).text();
  const heapMiB = Number(/^nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  const sizes = Object.fromEntries(
    [...text.matchAll(/^keyward_cache_entries\{cache="([^"]+)"\} (\d+)/gm)].map((m) => [m[1]!, Number(m[2])]),
  );
  return { heapMiB, sizes };
};

const typical = (runs: LoadResult[]) => runs.find((r) => r.rps === median(runs.map((x) => x.rps)))!;
const fmt = (r: LoadResult) =>
  `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  ` +
  `CPU ${(r.cpuUs ?? Number.NaN).toFixed(0).padStart(5)} µs/req  ` +
  (r.dbCpuUs === undefined ? "" : `PostgreSQL CPU ${r.dbCpuUs.toFixed(0).padStart(5)} µs/req  `) +
  `errors ${r.errors}`;

/** Each scale measured in turn, round after round; prints each and the last scale's ratio to the first. */
const compare = async (label: string, scales: Scale[], run: (s: Scale) => { script: string; connections: number }) => {
  const runs = await measureInterleaved(
    scales.map((s) => ({
      origin: s.target.url,
      pid: s.target.pid,
      dbPid: s.target.dbPid,
      paths: ["/"],
      seconds: settings.seconds,
      ...run(s),
    })),
    settings,
  );
  console.log(`\n${label}`);
  scales.forEach((s, i) => console.log(`  ${String(s.size).padStart(7)} identities  ${fmt(typical(runs[i]!))}`));
  const last = runs.length - 1;
  const ratio = (figure: (r: LoadResult) => number) =>
    median(runs[0]!.map((_, round) => figure(runs[last]![round]!) / figure(runs[0]![round]!)));
  console.log(
    `  ${scales[last]!.size} / ${scales[0]!.size}: req/s ${ratio((r) => r.rps).toFixed(2)}x, p99 ${ratio((r) => r.p99).toFixed(2)}x, ` +
      `CPU/req ${ratio((r) => r.cpuUs ?? Number.NaN).toFixed(2)}x, PostgreSQL CPU/req ${ratio((r) => r.dbCpuUs ?? Number.NaN).toFixed(2)}x   (target: unchanged, req/s >= 0.90x, p99 <= 1.10x)`,
  );
  if (runs.some((rs) => rs.some((r) => r.errors > 0))) {
    console.error("  some requests failed: the figures above are not valid");
    process.exitCode = 1;
  }
  return runs;
};

/** An identity with 1,000 rules beside one with a single rule, on `target`: HTTP and in-process figures. */
const measureRules = async (target: BenchTarget) => {
  const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
  const scope = await prepareProject(admin);
  const many = await prepareManyRules(admin, scope.projectId);
  const one = await identityThroughApi(admin, target.url, scope, "one-rule", { roles: [{ role: "one-rule" }] });
  const thousand = await identityThroughApi(admin, target.url, scope, "many-rules", {
    roles: [{ role: "many-a" }, { role: "many-b" }],
  });
  await many.completeIdentity(thousand.identityId);
  const path = readPath(scope.projectId);
  const [oneRuns, thousandRuns] = await measureInterleaved(
    [one, thousand].map((who) => ({
      origin: target.url,
      pid: target.pid,
      paths: [path],
      headers: { authorization: `Bearer ${who.token}` },
      connections: settings.connections,
      seconds: settings.seconds,
    })),
    settings,
  );
  console.log(`\nsecret read as one identity, ${settings.connections} connections`);
  console.log(`  1 rule        ${fmt(typical(oneRuns!))}`);
  console.log(`  1,000 rules   ${fmt(typical(thousandRuns!))}`);
  const cpuDiff = median(oneRuns!.map((r, i) => (thousandRuns![i]!.cpuUs ?? 0) - (r.cpuUs ?? 0)));
  console.log(`  server CPU per request, 1,000 rules - 1 rule: ${cpuDiff.toFixed(1)} µs   (target <= 50 µs)`);
  if ([...oneRuns!, ...thousandRuns!].some((r) => r.errors > 0)) {
    console.error("  some requests failed: the figures above are not valid");
    process.exitCode = 1;
  }

  // In process: what a request does with a cached ability (the read's checks), and the build a miss costs.
  const timeUs = (iterations: number, fn: () => void) => {
    for (let i = 0; i < Math.min(iterations, 1_000); i++) fn();
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    return Number(process.hrtime.bigint() - start) / iterations / 1000;
  };
  const object = secretObject("dev", "/", "BENCH_SECRET", []);
  let sink = 0;
  console.log("\npermission work in process (the ability cache holds the built ability between requests)");
  for (const [label, grantRules] of [
    ["1 rule", [allManyRules()[0]!.slice(0, 1)]],
    ["1,000 rules", allManyRules()],
  ] as const) {
    const grants: Grant[] = grantRules.map((rules) => ({ start: null, end: null, rules }));
    const { ability } = abilityOfGrants(grants);
    const check = timeUs(200_000, () => {
      if (ability.can("describeSecret", "secrets") && ability.can("describeSecret", "secrets", object)) sink++;
      if (ability.can("readValue", "secrets", object)) sink++;
    });
    const build = timeUs(label === "1 rule" ? 50_000 : 500, () => {
      if (
        abilityOfGrants(grants.map((g) => ({ ...g, rules: g.rules.slice() }))).ability.can(
          "readValue",
          "secrets",
          object,
        )
      )
        sink++;
    });
    console.log(
      `  ${label.padEnd(12)} checks per request (cached ability) ${check.toFixed(2).padStart(7)} µs   ` +
        `build on a miss ${build.toFixed(1).padStart(7)} µs   (target <= 50 µs per request)`,
    );
  }
  if (sink < 0) console.log(sink);
};

/**
 * BENCH_STATEMENTS=1 (with BENCH_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements"): each
 * scale's statements by total time since its database started, to attribute its PostgreSQL CPU.
 */
const printStatements = async (s: Scale) => {
  const client = new pg.Client({ connectionString: s.target.databaseUrl! });
  await client.connect();
  try {
    await client.query("create extension if not exists pg_stat_statements");
    const { rows } = await client.query<{ calls: string; total: number; rows: string; query: string }>(
      `select calls::text, total_exec_time as total, rows::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as query
         from pg_stat_statements order by total_exec_time desc limit 15`,
    );
    console.log(`\nstatements at ${s.size} identities (calls, total ms, rows)`);
    for (const r of rows)
      console.log(`  ${r.calls.padStart(9)} ${r.total.toFixed(0).padStart(8)} ${r.rows.padStart(9)}  ${r.query}`);
  } finally {
    await client.end();
  }
};

ensureWrk();
console.log(`${settings.seconds}s x ${settings.rounds} rounds (median), wrk -t1, PostgreSQL, servers in turn`);
const scales: Scale[] = [];
try {
  for (const size of SIZES) scales.push(await prepareScale(size));
  for (const connections of PHASES.has("login") ? [1, 32] : []) {
    await compare(`Universal Auth login, ${connections} connection(s), spread over the set`, scales, (s) => ({
      script: s.loginScript,
      connections,
    }));
  }
  if (PHASES.has("read")) {
    await compare(
      `authenticated secret read (GET v4 secret), 32 connections, every identity's token in turn`,
      scales,
      (s) => ({
        script: s.readScript,
        connections: 32,
      }),
    );
  }
  console.log(
    `\nmemory and caches after the reads (bounds: access_tokens 200000, abilities 10000, project_access 200000)`,
  );
  for (const s of scales) {
    const { heapMiB, sizes } = await cacheSizes(s.metricsUrl);
    console.log(
      `  ${String(s.size).padStart(7)} identities  RSS ${rssMiB(s.target.pid).toFixed(0).padStart(4)} MiB  ` +
        `heap used ${heapMiB.toFixed(0).padStart(4)} MiB  ` +
        Object.entries(sizes)
          .map(([k, v]) => `${k} ${v}`)
          .join(", "),
    );
  }
  if (scales.length > 1) {
    console.log(
      `  RSS ${scales.at(-1)!.size} / ${scales[0]!.size}: ${(rssMiB(scales.at(-1)!.target.pid) / rssMiB(scales[0]!.target.pid)).toFixed(2)}x`,
    );
  }

  if (process.env.BENCH_STATEMENTS === "1") for (const s of scales) await printStatements(s);
  if (PHASES.has("rules")) await measureRules(scales[0]!.target);
} finally {
  await Promise.all(scales.map((s) => s.target.stop()));
}
if (profileDir) {
  for (const { size } of scales)
    console.log(`\nprofile at ${size} identities\n${summariseProfile(join(profileDir, String(size)), 30)}`);
}
