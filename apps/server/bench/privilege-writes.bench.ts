import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { setupOk } from "./lib/endpoint";
import { spawnServer, startPostgres, type Spawned } from "./lib/processes";

/**
 * Concurrent writes to one project from two instances sharing one PostgreSQL, for BENCH_DURATION
 * seconds (20 by default): BENCH_CONNECTIONS clients (24 by default, split between the instances)
 * create v2 additional privileges for six identities of the project, while a few clients each
 * create identities, projects, project identities, folders and roles beside them (the last three in
 * the same project, so their inserts reference its row). Every write is valid, so every answer
 * should be 200. Prints the answers of each kind, the writes per second, the deadlocks PostgreSQL
 * counted and the privileges stored (which must equal the 200s of the creates).
 */
const SECONDS = Number(process.env.BENCH_DURATION ?? 20);
const CLIENTS = Number(process.env.BENCH_CONNECTIONS ?? 24);
const OTHER_CLIENTS = 4;
const IDENTITIES = 6;
const INSTANCES = 2;

const countOf = async (url: string, query: string, params: unknown[] = []) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(query, params);
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
};
const deadlocks = (url: string) =>
  countOf(url, "select deadlocks::text as n from pg_stat_database where datname = current_database()");

type Write = (api: KeywardClient, n: number) => Promise<{ status: number }>;

const pgServer = await startPostgres();
const servers: Spawned[] = [];
try {
  // One after the other: the second finds the schema migrated.
  for (let i = 0; i < INSTANCES; i += 1)
    servers.push(
      await spawnServer("bench/servers/keyward.ts", {
        DATABASE_URL: pgServer.url,
        DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
      }),
    );
  const boot = await createKeywardClient({ baseUrl: servers[0]!.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  const token = boot.body.identity.credentials.token;
  const admins = servers.map((server) => createKeywardClient({ baseUrl: server.url, token }));
  const admin = admins[0]!;
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench-writes" } }));
  const identities: string[] = [];
  for (let i = 0; i < IDENTITIES; i += 1) {
    const { identity } = setupOk(
      await admin.identities.create({
        body: { name: `writer-${i}`, organizationId: project.orgId, role: "no-access" },
      }),
    );
    setupOk(
      await admin.projects.addIdentityMembership({
        params: { projectId: project.id, identityId: identity.id },
        body: { role: "viewer" },
      }),
    );
    identities.push(identity.id);
  }

  const kinds: [string, number, Write][] = [
    [
      "privilege (v2 create)",
      CLIENTS,
      (api, n) =>
        api.privileges.v2.create({
          body: {
            identityId: identities[n % IDENTITIES]!,
            projectId: project.id,
            slug: `bench-${n}`,
            permissions: [{ subject: "secrets", action: ["describeSecret"], conditions: { secretPath: `/w-${n}` } }],
            type: { isTemporary: false },
          },
        }),
    ],
    [
      "identity",
      OTHER_CLIENTS,
      (api, n) =>
        api.identities.create({ body: { name: `other-${n}`, organizationId: project.orgId, role: "no-access" } }),
    ],
    ["project", OTHER_CLIENTS, (api, n) => api.projects.create({ body: { projectName: `other-${n}` } })],
    [
      "project identity",
      OTHER_CLIENTS,
      (api, n) => api.projectIdentities.create({ params: { projectId: project.id }, body: { name: `owned-${n}` } }),
    ],
    [
      "folder",
      OTHER_CLIENTS,
      (api, n) =>
        api.folders.create({ body: { projectId: project.id, environment: "dev", path: "/", name: `f-${n}` } }),
    ],
    [
      "role",
      OTHER_CLIENTS,
      (api, n) =>
        api.roles.create({
          params: { projectId: project.id },
          body: { slug: `role-${n}`, name: `Role ${n}`, permissions: [{ subject: "secrets", action: ["read"] }] },
        }),
    ],
  ];

  const before = await deadlocks(pgServer.url);
  const statuses = new Map<string, Map<number, number>>(kinds.map(([kind]) => [kind, new Map()]));
  const until = Date.now() + SECONDS * 1000;
  let sequence = 0;
  let client = 0;
  const started = performance.now();
  await Promise.all(
    kinds.flatMap(([kind, clients, write]) =>
      Array.from({ length: clients }, async () => {
        const api = admins[(client += 1) % INSTANCES]!;
        const counts = statuses.get(kind)!;
        while (Date.now() < until) {
          const { status } = await write(api, (sequence += 1));
          counts.set(status, (counts.get(status) ?? 0) + 1);
        }
      }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  // Stopped first: a backend reports its deadlocks to the statistics when it exits, if not before.
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  const stored = await countOf(
    pgServer.url,
    "select count(*)::text as n from identity_project_additional_privileges where project_id = $1",
    [project.id],
  );
  console.log(
    `\n${INSTANCES} instances on one PostgreSQL, ${SECONDS}s, ${CLIENTS} clients creating privileges for ${IDENTITIES} identities of one project, ${OTHER_CLIENTS} clients for each other kind`,
  );
  for (const [kind, counts] of statuses) {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const answers = [...counts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${count}`)
      .join("   ");
    console.log(
      `${kind.padEnd(24)} ${String(total).padStart(6)} writes (${(total / elapsed).toFixed(0)}/s)   ${answers}`,
    );
  }
  console.log(
    `deadlocks counted by PostgreSQL: ${(await deadlocks(pgServer.url)) - before}   privileges stored: ${stored}`,
  );
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  pgServer.stop();
}
