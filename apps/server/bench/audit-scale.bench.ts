import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import type { AppDeps } from "../src/context";
import { openDatabase } from "../src/db/database";
import { eventHash, GENESIS_HASH } from "../src/modules/audit/audit-chain";
import { pruneAuditLogs } from "../src/modules/audit/audit-retention";
import { spawnServer, startPostgres } from "./lib/processes";
import { dropAuditIndexes, explainListQueries, restoreAuditIndexes } from "./lib/audit-scale-sql";

/**
 * The audit log at volume on PostgreSQL: BENCH_AUDIT_EVENTS (10,000,000 by default) events of one
 * organization across 50 project chains over 90 days, the oldest tenth expired. Prints the seed time;
 * the first and the tenth page (offset against cursor) of the list route per filter at one
 * connection; verification of one day of one chain against the whole chain; the p99 of an append
 * (a change and its event) idle and while 1/10 of the events are pruned. Targets beside each figure.
 *
 * One chain (project 0) is written with real hashes so it verifies; the others are generated in SQL
 * with placeholder hashes (their content is what the list reads, and pruning does not read hashes).
 */
const EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 10_000_000);
const RUNS = Number(process.env.BENCH_AUDIT_RUNS ?? 50);
const APPENDS = Number(process.env.BENCH_AUDIT_APPENDS ?? 300);
const PROJECTS = 50;
const DAY_MS = 86_400_000;
const SPAN_MS = 90 * DAY_MS;
const EXPIRE_AFTER_MS = 81 * DAY_MS; // the oldest 9 of 90 days: a tenth of the events
const PAGE = 50;
const PLACEHOLDER_HASH = "f".repeat(64);

const pgServer = await startPostgres();
const server = await spawnServer("bench/servers/keyward.ts", {
  DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
  DATABASE_URL: pgServer.url,
});
const sqlClient = new pg.Client({ connectionString: pgServer.url });
await sqlClient.connect();
const handle = await openDatabase({ databaseUrl: pgServer.url, poolSize: 2, statementTimeoutMs: 0 });

const stats = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
};
const ms = (value: number) => `${value.toFixed(2).padStart(8)} ms`;

/**
 * The slowest append while pruning, and what PostgreSQL logged as running during it: checkpoints
 * (from "checkpoint starting" to "checkpoint complete") and autovacuum or autoanalyze runs (logged
 * at their end with their elapsed time). Log lines start with the default prefix's timestamp.
 */
const slowestAppendBeside = (log: string, startedAt: number[], durations: number[]) => {
  if (durations.length === 0) return "no append while pruning";
  const slowest = durations.indexOf(Math.max(...durations));
  const from = startedAt[slowest]!;
  const to = from + durations[slowest]!;
  const spans: { what: string; start: number; end: number }[] = [];
  let checkpointStart: number | undefined;
  // An entry may span lines (autovacuum's report does): split where a timestamp begins one.
  for (const line of log.split(/\n(?=\d{4}-\d\d-\d\d )/)) {
    const at = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC/.exec(line);
    if (!at) continue;
    const time = Date.parse(`${at[1]!.replace(" ", "T")}Z`);
    if (line.includes("checkpoint starting")) checkpointStart = time;
    else if (line.includes("checkpoint complete")) {
      spans.push({
        what: `checkpoint (${/total=[\d.]+ s/.exec(line)?.[0] ?? "?"})`,
        start: checkpointStart ?? time,
        end: time,
      });
      checkpointStart = undefined;
    }
    const auto = /automatic (vacuum|analyze) of table "([^"]+)".*?elapsed: ([\d.]+) s/s.exec(line);
    if (auto) spans.push({ what: `auto${auto[1]} of ${auto[2]}`, start: time - Number(auto[3]) * 1000, end: time });
  }
  if (checkpointStart !== undefined)
    spans.push({ what: "checkpoint (running)", start: checkpointStart, end: Infinity });
  const beside = spans.filter((span) => span.start <= to && span.end >= from).map((span) => span.what);
  return `slowest append while pruning: ${ms(durations[slowest]!)}, beside it: ${beside.join(", ") || "nothing PostgreSQL logged"}`;
};

try {
  const boot = await createKeywardClient({ baseUrl: server.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error("bootstrap failed");
  const token = boot.body.identity.credentials.token;
  const orgId = boot.body.organization.id;
  const admin = createKeywardClient({ baseUrl: server.url, token });
  const projects: string[] = [];
  for (let i = 0; i < PROJECTS; i += 1) {
    const res = await admin.projects.create({ body: { projectName: `audit-scale-${i}`, type: "secret-manager" } });
    if (res.status !== 200) throw new Error("project create failed");
    projects.push(res.body.project.id);
  }
  const perChain = Math.floor(EVENTS / PROJECTS);
  const total = perChain * PROJECTS;
  const base = Date.now() - SPAN_MS - 60_000;
  const stepMs = SPAN_MS / total;

  // Seed: the events of setup go; indexes and keys are dropped, rows generated, indexes rebuilt.
  const seedStart = performance.now();
  await sqlClient.query("truncate audit_log_outbox, audit_logs, audit_log_chains");
  const saved = await dropAuditIndexes(sqlClient);
  // Event g (0 ≤ g < total) is event g / 50 + 1 of project g % 50's chain, at base + g·step.
  const seedSql = `insert into audit_logs (id, org_id, project_id, project_name, chain_id, seq, actor_type, actor_id,
       actor_metadata, event_type, event_metadata, ip_address, user_agent, user_agent_type, created_at, expires_at,
       prev_hash, hash)
     select gen_random_uuid(), $1::uuid, p, 'audit-scale', p, g / ${PROJECTS} + 1, 'identity', 'actor-' || (g / 7) % 500,
       jsonb_build_object('identityId', 'actor-' || (g / 7) % 500, 'name', 'bench'),
       'event-type-' || (g / ${PROJECTS}) % 40,
       jsonb_build_object('environment', (array['dev','staging','prod'])[1 + g % 3],
                          'secretPath', '/app-' || g % 50, 'secretKey', 'KEY_' || g % 5000),
       '10.0.0.1', 'node', (array['other','cli','web'])[1 + g % 3], t, t + interval '${EXPIRE_AFTER_MS / 1000} seconds',
       '${PLACEHOLDER_HASH}', '${PLACEHOLDER_HASH}'
     from generate_series($3::bigint, $4::bigint) g
     cross join lateral (select ($2::uuid[])[1 + g % ${PROJECTS}] as p,
       to_timestamp(${base / 1000}) + (g * ${stepMs}) * interval '1 millisecond' as t) x
     where g % ${PROJECTS} <> 0`;
  const chunk = Math.ceil(total / 4);
  const connections = await Promise.all(
    [0, 1].map(async () => {
      const client = new pg.Client({ connectionString: pgServer.url });
      await client.connect();
      await client.query("set synchronous_commit = off");
      return client;
    }),
  );
  const sqlChunks = [0, 1, 2, 3].map((i) => [i * chunk, Math.min(total, (i + 1) * chunk) - 1] as const);
  const seeding = Promise.all(
    connections.map(async (client, lane) => {
      for (const [from, to] of sqlChunks.filter((_, i) => i % 2 === lane)) {
        await client.query(seedSql, [orgId, projects, from, to]);
      }
    }),
  );
  // Meanwhile project 0's chain, hashed as the writer does, in batches.
  const chained = projects[0]!;
  let prevHash = GENESIS_HASH;
  for (let from = 0; from < perChain; from += 5_000) {
    const batch = [];
    for (let k = from; k < Math.min(perChain, from + 5_000); k += 1) {
      const g = k * PROJECTS;
      const createdAt = new Date(Math.floor(base + g * stepMs));
      const actorId = `actor-${Math.floor(g / 7) % 500}`;
      const row = {
        id: randomUUID(),
        orgId,
        projectId: chained,
        projectName: "audit-scale",
        chainId: chained,
        seq: String(k + 1),
        actorType: "identity",
        actorId,
        actorMetadata: { identityId: actorId, name: "bench" },
        eventType: `event-type-${k % 40}`,
        eventMetadata: {
          environment: ["dev", "staging", "prod"][g % 3],
          secretPath: "/app-0",
          secretKey: `KEY_${g % 5000}`,
        },
        ipAddress: "10.0.0.1",
        userAgent: "node",
        userAgentType: ["other", "cli", "web"][g % 3]!,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + EXPIRE_AFTER_MS),
        prevHash,
      };
      prevHash = eventHash(row);
      batch.push({ ...row, hash: prevHash });
    }
    await sqlClient.query(
      `insert into audit_logs (id, org_id, project_id, project_name, chain_id, seq, actor_type, actor_id, actor_metadata,
         event_type, event_metadata, ip_address, user_agent, user_agent_type, created_at, expires_at, prev_hash, hash)
       select "id", "orgId", "projectId", "projectName", "chainId", "seq", "actorType", "actorId", "actorMetadata",
         "eventType", "eventMetadata", "ipAddress", "userAgent", "userAgentType", "createdAt", "expiresAt", "prevHash", "hash"
       from jsonb_to_recordset($1::jsonb) as x("id" uuid, "orgId" uuid, "projectId" uuid, "projectName" text,
         "chainId" uuid, "seq" bigint, "actorType" text, "actorId" text, "actorMetadata" jsonb, "eventType" text,
         "eventMetadata" jsonb, "ipAddress" text, "userAgent" text, "userAgentType" text, "createdAt" timestamptz,
         "expiresAt" timestamptz, "prevHash" text, "hash" text)`,
      [JSON.stringify(batch)],
    );
  }
  await seeding;
  await Promise.all(connections.map((client) => client.end()));
  const rowsAt = performance.now();
  await sqlClient.query(
    `insert into audit_log_chains (chain_id, org_id, seq, hash, pruned_seq, pruned_hash)
     select p, $1::uuid, $2::bigint, case when p = $4::uuid then $5 else '${PLACEHOLDER_HASH}' end, 0, '${GENESIS_HASH}'
     from unnest($3::uuid[]) p`,
    [orgId, perChain, projects, chained, prevHash],
  );
  await restoreAuditIndexes(sqlClient, saved);
  await sqlClient.query("vacuum analyze audit_logs");
  const seeded = performance.now();
  console.log(
    `seeded ${total} events in ${((seeded - seedStart) / 1000).toFixed(1)} s ` +
      `(rows ${((rowsAt - seedStart) / 1000).toFixed(1)} s, keys, indexes and analyze ${((seeded - rowsAt) / 1000).toFixed(1)} s)`,
  );

  // The list: first page, tenth by offset, tenth by cursor; one connection, sequential requests.
  const now = Date.now();
  const span = { startDate: new Date(now - SPAN_MS).toISOString(), endDate: new Date(now).toISOString() };
  const oneDay = {
    startDate: new Date(base + 30 * DAY_MS).toISOString(),
    endDate: new Date(base + 31 * DAY_MS).toISOString(),
  };
  const filters: [string, Record<string, string>][] = [
    ["project, 90 days", { ...span, projectId: projects[7]! }],
    ["event type, 90 days", { ...span, eventType: "event-type-8" }],
    ["actor, 90 days", { ...span, actor: "actor-12", actorType: "identity" }],
    ["date range (one day), org", oneDay],
  ];
  const get = async (query: Record<string, string | number>) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) params.set(key, String(value));
    const res = await fetch(`${server.url}/api/v1/organization/audit-logs?${params.toString()}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { auditLogs?: { id: string }[]; nextCursor?: string | null };
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  const time = async (query: Record<string, string | number>) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS + 3; i += 1) {
      const t0 = performance.now();
      await get(query);
      if (i >= 3) times.push(performance.now() - t0);
    }
    return stats(times);
  };
  console.log(`\nlist, page of ${PAGE}, ${RUNS} requests each at one connection (target: p99 <= 50 ms)`);
  for (const [label, filter] of filters) {
    const first = await time({ ...filter, limit: PAGE });
    const byOffset = await time({ ...filter, limit: PAGE, offset: 9 * PAGE });
    let cursor: string | null | undefined;
    for (let page = 0; page < 9; page += 1)
      cursor = (await get({ ...filter, limit: PAGE, ...(cursor ? { cursor } : {}) })).nextCursor;
    const tenthOffset = (await get({ ...filter, limit: PAGE, offset: 9 * PAGE })).auditLogs!.map((e) => e.id);
    const byCursor = cursor ? await time({ ...filter, limit: PAGE, cursor }) : undefined;
    const same = cursor
      ? JSON.stringify((await get({ ...filter, limit: PAGE, cursor })).auditLogs!.map((e) => e.id)) ===
        JSON.stringify(tenthOffset)
      : false;
    console.log(
      `${label.padEnd(28)} first p50 ${ms(first.p50)} p99 ${ms(first.p99)} | 10th by offset p50 ${ms(byOffset.p50)} ` +
        `p99 ${ms(byOffset.p99)} | 10th by cursor ${byCursor ? `p50 ${ms(byCursor.p50)} p99 ${ms(byCursor.p99)}` : "(no cursor)"}` +
        `${byCursor ? (same ? "  (same rows)" : "  (ROWS DIFFER)") : ""}`,
    );
  }
  if (process.env.BENCH_AUDIT_EXPLAIN !== "0") {
    await explainListQueries(sqlClient, { orgId, projectId: projects[7]!, span, oneDay, page: PAGE });
  }

  // Verification: one day of the hashed chain against all of it.
  const verify = async (query: Record<string, string>) => {
    const times: number[] = [];
    let checked = 0;
    for (let i = 0; i < 3; i += 1) {
      const t0 = performance.now();
      const res = await admin.auditLogs.verify({ query: { projectId: chained, ...query } });
      times.push(performance.now() - t0);
      if (res.status !== 200 || !res.body.valid) throw new Error(`verify failed: ${JSON.stringify(res.body)}`);
      checked = res.body.checked;
    }
    return { ...stats(times), checked };
  };
  const day = await verify({
    startDate: new Date(base + 45 * DAY_MS).toISOString(),
    endDate: new Date(base + 46 * DAY_MS).toISOString(),
  });
  const whole = await verify({});
  console.log(`\nverify (target: one day costs in proportion to the day)`);
  console.log(
    `one day of one chain       ${String(day.checked).padStart(8)} events  p50 ${ms(day.p50)}  max ${ms(day.max)}`,
  );
  console.log(
    `the whole chain            ${String(whole.checked).padStart(8)} events  p50 ${ms(whole.p50)}  max ${ms(whole.max)}`,
  );

  // Appends (a change with its event, in a project's chain) idle, then while pruning the expired tenth.
  const appendOnce = async (i: number) => {
    const t0 = performance.now();
    const res = await admin.auditLogs.setProjectRetention({
      params: { projectId: projects[i % PROJECTS]! },
      body: { auditLogsRetentionDays: null },
    });
    if (res.status !== 200) throw new Error(`append failed: ${res.status}`);
    return performance.now() - t0;
  };
  // The seeding's own WAL is checkpointed first, so a checkpoint met while pruning is the pruning's.
  const checkpointStart = performance.now();
  await sqlClient.query("checkpoint");
  console.log(`\ncheckpoint after seeding: ${ms(performance.now() - checkpointStart)}`);
  const idle: number[] = [];
  for (let i = 0; i < APPENDS; i += 1) idle.push(await appendOnce(i));
  // Every lock wait longer than 10 ms is logged by PostgreSQL with its length: what pruning made an
  // append wait, apart from a busy machine.
  await sqlClient.query("alter system set log_lock_waits = on");
  await sqlClient.query("alter system set deadlock_timeout = '10ms'");
  // Checkpoints and autovacuum runs are logged too, with their times: what else the slowest append met.
  await sqlClient.query("alter system set log_checkpoints = on");
  await sqlClient.query("alter system set log_autovacuum_min_duration = 0");
  await sqlClient.query("select pg_reload_conf()");
  const logFrom = statSync(pgServer.log).size;
  const deps = { db: handle.db, clock: { now: () => Date.now() } } as unknown as AppDeps;
  const walAt = async () =>
    BigInt((await sqlClient.query<{ lsn: string }>("select (pg_current_wal_lsn() - '0/0')::text as lsn")).rows[0]!.lsn);
  const walBefore = await walAt();
  const pruneStart = performance.now();
  let pruned = 0;
  let pruning = true;
  const pruner = pruneAuditLogs(deps).then((count) => {
    pruned = count;
    pruning = false;
  });
  const during: number[] = [];
  const startedAt: number[] = [];
  for (let i = 0; pruning; i += 1) {
    startedAt.push(Date.now());
    during.push(await appendOnce(i));
  }
  await pruner;
  const pruneSeconds = (performance.now() - pruneStart) / 1000;
  const walMiB = Number((await walAt()) - walBefore) / 2 ** 20;
  const idleStats = stats(idle);
  const duringStats = stats(during);
  console.log(`\nappend p99 while pruning (target: <= 100 ms blocked)`);
  console.log(
    `idle            ${String(idle.length).padStart(6)} appends  p50 ${ms(idleStats.p50)}  p99 ${ms(idleStats.p99)}  max ${ms(idleStats.max)}`,
  );
  console.log(
    `while pruning   ${String(during.length).padStart(6)} appends  p50 ${ms(duringStats.p50)}  p99 ${ms(duringStats.p99)}  max ${ms(duringStats.max)}` +
      `   (${pruned} events pruned in ${pruneSeconds.toFixed(1)} s; WAL written ${walMiB.toFixed(0)} MiB, ${(walMiB / pruneSeconds).toFixed(1)} MiB/s)`,
  );
  const waits = [
    ...readFileSync(pgServer.log, "utf8")
      .slice(logFrom)
      .matchAll(/acquired \w+ on .* after ([\d.]+) ms/g),
  ];
  const longest = Math.max(0, ...waits.map((m) => Number(m[1])));
  console.log(
    `lock waits over 10 ms while pruning: ${waits.length}, longest ${longest.toFixed(1)} ms (target <= 100 ms): ${longest <= 100 ? "met" : "MISSED"}`,
  );
  console.log(slowestAppendBeside(readFileSync(pgServer.log, "utf8").slice(logFrom), startedAt, during));
  const after = await verify({});
  console.log(`the whole chain after pruning: valid, ${after.checked} events, p50 ${ms(after.p50)}`);
} finally {
  await handle.close();
  await sqlClient.end();
  await server.stop();
  pgServer.stop();
}
