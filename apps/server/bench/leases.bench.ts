import { randomBytes } from "node:crypto";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import { startMariadb } from "../test/services/mariadb";
import { startPostgresTarget } from "../test/services/postgres-target";
import { startRabbitmq } from "../test/services/rabbitmq";
import { startSlapd } from "../test/services/slapd";
import { benchSettings, startKeyward } from "./lib/keyward";
import { spawnServer } from "./lib/processes";

/**
 * Lease throughput per provider. On PostgreSQL: each worker creates a lease (a real role on a real
 * PostgreSQL 15 target, scram login) and revokes it (DROP ROLE), in a loop. Beside it, in the same
 * run: the same CREATE/DROP ROLE statements sent straight to the target over pooled connections (the
 * floor Keyward cannot beat) and two requests to a bare node:http server (the HTTP floor). Then the
 * same create + revoke pair on MariaDB (mysql2 over TLS), RabbitMQ (management API) and slapd (LDIF
 * entries), with Keyward on PostgreSQL.
 */
process.env.ALLOW_PRIVATE_OUTBOUND = "loopback";
const settings = benchSettings();
const workers = Number(process.env.BENCH_CONNECTIONS ?? 8);

type Pair = () => Promise<[number, number]>;
type Result = { pairsPerSecond: number; create: [number, number]; revoke: [number, number]; errors: number };

const percentiles = (values: number[]): [number, number] => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return [at(0.5), at(0.99)];
};

const timed = async (work: () => Promise<unknown>) => {
  const start = performance.now();
  await work();
  return performance.now() - start;
};

const runOnce = async (seconds: number, pair: Pair): Promise<Result> => {
  const creates: number[] = [];
  const revokes: number[] = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < deadline) {
        try {
          const [create, revoke] = await pair();
          creates.push(create);
          revokes.push(revoke);
        } catch {
          errors += 1;
        }
      }
    }),
  );
  return {
    pairsPerSecond: creates.length / seconds,
    create: percentiles(creates),
    revoke: percentiles(revokes),
    errors,
  };
};

/** A short warm-up, then the median of the rounds by throughput. */
const measure = async (pair: Pair) => {
  await runOnce(Math.min(2, settings.warmupSeconds), pair);
  const rounds: Result[] = [];
  for (let i = 0; i < settings.rounds; i += 1) rounds.push(await runOnce(settings.seconds, pair));
  return rounds.sort((a, b) => a.pairsPerSecond - b.pairsPerSecond)[Math.floor(rounds.length / 2)]!;
};

const stopTarget = await startPostgresTarget();
const stopOthers = [await startMariadb(), await startRabbitmq(), await startSlapd()];
const targetUrl = new URL(process.env.KEYWARD_TEST_PG_TARGET_URL!);
const rows: { label: string; result: Result }[] = [];

/** Inputs for the other providers' servers, from the addresses their starters published. */
const otherProviders = () => {
  const maria = new URL(process.env.KEYWARD_TEST_MARIADB_URL!);
  const rabbit = new URL(process.env.KEYWARD_TEST_RABBITMQ_URL!);
  return {
    mariadb: {
      type: "sql-database",
      inputs: {
        client: "mysql2",
        host: maria.hostname,
        port: Number(maria.port),
        database: maria.pathname.slice(1),
        username: decodeURIComponent(maria.username),
        password: decodeURIComponent(maria.password),
        ca: process.env.KEYWARD_TEST_MARIADB_CA,
      },
    },
    rabbitmq: {
      type: "rabbit-mq",
      inputs: {
        host: `http://${rabbit.hostname}`,
        port: Number(rabbit.port),
        username: decodeURIComponent(rabbit.username),
        password: decodeURIComponent(rabbit.password),
        tags: [],
        virtualHost: { name: "/", permissions: { read: ".*", write: ".*", configure: ".*" } },
      },
    },
    ldap: {
      type: "ldap",
      inputs: {
        url: process.env.KEYWARD_TEST_LDAP_URL,
        binddn: process.env.KEYWARD_TEST_LDAP_ADMIN_DN,
        bindpass: process.env.KEYWARD_TEST_LDAP_ADMIN_PASSWORD,
        creationLdif:
          "dn: cn={{Username}},ou=leases,dc=keyward,dc=test\nobjectClass: inetOrgPerson\ncn: {{Username}}\nsn: lease\nuserPassword: {{Password}}\n",
        revocationLdif: "dn: cn={{Username}},ou=leases,dc=keyward,dc=test\nchangetype: delete\n",
      },
    },
  };
};

try {
  // Floor 1: the provider's statements without Keyward, on pooled connections as Keyward uses them.
  const targetPool = new pg.Pool({ connectionString: targetUrl.toString(), max: workers });
  const onTarget = async (statements: string[]) => {
    const client = await targetPool.connect();
    try {
      await client.query("BEGIN");
      for (const statement of statements) await client.query(statement);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
  };
  rows.push({
    label: "floor: raw SQL on the target",
    result: await measure(async () => {
      const name = `bench_${randomBytes(8).toString("hex")}`;
      const until = new Date(Date.now() + 3_600_000).toISOString();
      return [
        await timed(() =>
          onTarget([
            `CREATE ROLE "${name}" WITH LOGIN PASSWORD 'x${name}' VALID UNTIL '${until}'`,
            `GRANT SELECT ON ALL TABLES IN SCHEMA public TO "${name}"`,
          ]),
        ),
        await timed(() =>
          onTarget([
            `REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA public FROM "${name}"`,
            `DROP ROLE IF EXISTS "${name}"`,
          ]),
        ),
      ];
    }),
  });
  await targetPool.end();

  // Floor 2: two HTTP requests to node:http with no framework.
  const bare = await spawnServer("bench/servers/bare.ts");
  try {
    rows.push({
      label: "floor: 2 requests to bare node:http",
      result: await measure(async () => [
        await timed(() => fetch(bare.url).then((r) => r.text())),
        await timed(() => fetch(bare.url).then((r) => r.text())),
      ]),
    });
  } finally {
    await bare.stop();
  }

  for (const database of ["postgres", "pglite"] as const) {
    const keyward = await startKeyward(database);
    try {
      const admin = createKeywardClient({ baseUrl: keyward.url, token: keyward.adminToken });
      const project = await admin.projects.create({ body: { projectName: "bench" } });
      if (project.status !== 200) throw new Error(`project: ${JSON.stringify(project.body)}`);
      const scope = { projectSlug: project.body.project.slug, environmentSlug: "dev", path: "/" };
      const inputs = {
        client: "postgres" as const,
        host: targetUrl.hostname,
        port: Number(targetUrl.port),
        database: "postgres",
        username: decodeURIComponent(targetUrl.username),
        password: decodeURIComponent(targetUrl.password),
      };
      const secret = await admin.dynamicSecrets.create({
        body: { ...scope, name: "bench", provider: { type: "sql-database", inputs }, defaultTTL: "1h" },
      });
      if (secret.status !== 200) throw new Error(`dynamic secret: ${JSON.stringify(secret.body)}`);
      rows.push({
        label: `keyward lease create+revoke (${database})`,
        result: await measure(async () => {
          let leaseId = "";
          const create = await timed(async () => {
            const res = await admin.dynamicSecretLeases.create({ body: { ...scope, dynamicSecretName: "bench" } });
            if (res.status !== 200) throw new Error(`lease: ${res.status}`);
            leaseId = res.body.lease.id;
          });
          const revoke = await timed(async () => {
            const res = await admin.dynamicSecretLeases.delete({ params: { leaseId }, body: scope });
            if (res.status !== 200 || res.body.lease.status !== null) throw new Error(`revoke: ${res.status}`);
          });
          return [create, revoke];
        }),
      });
      const leftover = await admin.dynamicSecrets.listLeases({ params: { name: "bench" }, query: scope });
      if (leftover.status === 200 && leftover.body.leases.length > 0)
        console.log(`  note: ${leftover.body.leases.length} leases left (from interrupted pairs)`);
      if (database !== "postgres") continue;
      for (const [name, provider] of Object.entries(otherProviders())) {
        const created = await admin.dynamicSecrets.create({
          body: { ...scope, name, provider: provider as never, defaultTTL: "1h" },
        });
        if (created.status !== 200) throw new Error(`${name}: ${JSON.stringify(created.body)}`);
        rows.push({
          label: `keyward lease create+revoke: ${name}`,
          result: await measure(async () => {
            let leaseId = "";
            const create = await timed(async () => {
              const res = await admin.dynamicSecretLeases.create({ body: { ...scope, dynamicSecretName: name } });
              if (res.status !== 200) throw new Error(`lease: ${res.status}`);
              leaseId = res.body.lease.id;
            });
            const revoke = await timed(async () => {
              const res = await admin.dynamicSecretLeases.delete({ params: { leaseId }, body: scope });
              if (res.status !== 200 || res.body.lease.status !== null) throw new Error(`revoke: ${res.status}`);
            });
            return [create, revoke];
          }),
        });
      }
    } finally {
      await keyward.stop();
    }
  }
} finally {
  stopTarget();
  for (const stop of stopOthers) await stop();
}

const floor = rows[0]!.result.pairsPerSecond;
const http = rows[1]!.result.pairsPerSecond;
console.log(
  `\n${workers} workers, ${settings.seconds}s x ${settings.rounds} rounds (median); one pair = create + revoke`,
);
for (const { label, result } of rows) {
  const ms = (v: [number, number]) => `${v[0].toFixed(1)}/${v[1].toFixed(1)} ms`;
  console.log(
    `${label.padEnd(38)} ${result.pairsPerSecond.toFixed(1).padStart(8)} pairs/s   create p50/p99 ${ms(result.create).padStart(16)}   revoke p50/p99 ${ms(result.revoke).padStart(16)}   errors ${result.errors}   ${((result.pairsPerSecond / floor) * 100).toFixed(1)}% of raw SQL, ${((result.pairsPerSecond / http) * 100).toFixed(2)}% of bare http`,
  );
}
