import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import { spawnServer, startPostgres } from "./lib/processes";

/**
 * A filtered page of the audit log over 1,000,000 events on PostgreSQL, through the HTTP
 * route (authentication, permission, query, JSON). Target: <= 50 ms. The table is generated in SQL:
 * 20 organizations (the measured one holds 1/4 of the events), 40 projects, 40 event types, 500
 * actors, metadata with environment, path and key, spread over 90 days.
 */
const EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 1_000_000);
const RUNS = 100;

const pgServer = await startPostgres();
const server = await spawnServer("bench/servers/keyward.ts", {
  DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
  DATABASE_URL: pgServer.url,
});
try {
  const boot = await createKeywardClient({ baseUrl: server.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error("bootstrap failed");
  const token = boot.body.identity.credentials.token;
  const orgId = boot.body.organization.id;
  const admin = createKeywardClient({ baseUrl: server.url, token });
  const projects: string[] = [];
  for (let i = 0; i < 4; i += 1) {
    const res = await admin.projects.create({ body: { projectName: `audit-bench-${i}`, type: "secret-manager" } });
    if (res.status !== 200) throw new Error("project create failed");
    projects.push(res.body.project.id);
  }

  const db = new pg.Client({ connectionString: pgServer.url });
  await db.connect();
  const started = Date.now();
  await db.query(
    `insert into audit_logs (id, org_id, project_id, project_name, chain_id, seq, actor_type, actor_id, actor_metadata,
       event_type, event_metadata, ip_address, user_agent, user_agent_type, created_at, expires_at, prev_hash, hash)
     select gen_random_uuid(), o.org_id, p.project_id, 'bench', coalesce(p.project_id, o.org_id), 1000000 + g, 'identity',
       'actor-' || (g % 500), jsonb_build_object('identityId', 'actor-' || (g % 500), 'name', 'bench'),
       'event-type-' || (g % 40),
       jsonb_build_object('environment', (array['dev','staging','prod'])[1 + g % 3],
                          'secretPath', '/app-' || (g % 50), 'secretKey', 'KEY_' || (g % 5000)),
       '10.0.0.1', 'node', (array['other','cli','web'])[1 + g % 3],
       now() - ((g % 7776000) || ' seconds')::interval, now() + interval '90 days', '', ''
     from generate_series(1, $1::int) g
     cross join lateral (select case when g % 4 = 0 then $2::uuid else gen_random_uuid() end as org_id) o
     cross join lateral (select case when g % 4 = 0 then ($3::uuid[])[1 + (g / 4) % 4] else null end as project_id) p`,
    [EVENTS, orgId, projects],
  );
  await db.query("analyze audit_logs");
  console.log(`generated ${EVENTS} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await db.end();

  const now = Date.now();
  const window = (days: number) => ({
    startDate: new Date(now - days * 86_400_000).toISOString(),
    endDate: new Date(now).toISOString(),
  });
  const cases: [string, Record<string, string | number>][] = [
    ["org, last 7 days, page of 50", { ...window(7), limit: 50 }],
    ["org, 90 days, offset 500", { ...window(90), offset: 500, limit: 50 }],
    ["project, 30 days", { ...window(30), projectId: projects[1]!, limit: 50 }],
    ["event type, 90 days", { ...window(90), eventType: "event-type-8", limit: 50 }],
    ["actor, 90 days", { ...window(90), actor: "actor-12", actorType: "identity", limit: 50 }],
    [
      "project + environment + path, 90 days",
      { ...window(90), projectId: projects[2]!, environment: "prod", secretPath: "/app-8", limit: 50 },
    ],
    ["environment + path matching nothing", { ...window(90), environment: "prod", secretPath: "/app-7", limit: 50 }],
    ["secret key, 90 days", { ...window(90), secretKey: "KEY_120", limit: 50 }],
    ["user agent type, 7 days", { ...window(7), userAgentType: "cli", limit: 50 }],
    ["org, 90 days, page of 1000", { ...window(90), limit: 1000 }],
  ];
  for (const [label, query] of cases) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) params.set(key, String(value));
    const url = `${server.url}/api/v1/organization/audit-logs?${params.toString()}`;
    const times: number[] = [];
    let count = 0;
    for (let i = 0; i < RUNS + 5; i += 1) {
      const t0 = performance.now();
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { auditLogs?: unknown[] };
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${JSON.stringify(body)}`);
      if (i >= 5) times.push(performance.now() - t0);
      count = body.auditLogs!.length;
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    console.log(
      `${label.padEnd(42)} rows ${String(count).padStart(4)}   p50 ${at(0.5)} ms   p95 ${at(0.95)} ms   max ${at(1)} ms`,
    );
  }
} finally {
  await server.stop();
  pgServer.stop();
}
