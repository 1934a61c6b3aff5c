import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { dataKeyOf } from "../src/crypto/data-keys";
import { createSecretBox } from "../src/crypto/envelope";
import { sealFields } from "../src/modules/secrets/secret-crypto";
import { setupOk } from "./lib/endpoint";
import { spawnServer, startPostgres } from "./lib/processes";

/**
 * Search across one project of ~1,000 folders and 100,000 secrets on PostgreSQL, one request at a
 * time (one connection): p50 and p99 per query, beside the 100 ms target. Folders, tags and the
 * project's data key are made through the API; the secrets are inserted with SQL in bulk, each value
 * sealed under the project's data key exactly as the server seals it (so every row opens).
 * BENCH_SEARCH_REQUESTS sets the requests per query (default 100), BENCH_SEARCH_SECRETS the secrets.
 */
const ENVIRONMENTS = ["dev", "staging", "prod"];
const TOP = 10;
const SUB = 33;
const SECRETS = Number(process.env.BENCH_SEARCH_SECRETS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_SEARCH_REQUESTS ?? 100);
const TARGET_MS = 100;
const WORDS = ["DB", "API", "CACHE", "QUEUE", "AUTH", "SMTP", "S3", "REDIS", "STRIPE", "SENTRY"];
const PARTS = ["HOST", "PORT", "USER", "PASSWORD", "TOKEN", "URL", "KEY", "REGION"];

const rootKey = randomBytes(32);
const pgServer = await startPostgres();
const server = await spawnServer("bench/servers/keyward.ts", {
  DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
  DATABASE_URL: pgServer.url,
  ENCRYPTION_KEY: rootKey.toString("base64"),
});
const db = new pg.Client({ connectionString: pgServer.url });

const inParallel = async <T>(items: readonly T[], width: number, run: (item: T) => Promise<unknown>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
};

/** The project's folders through the API: each environment's root, 10 top folders, 33 below each. */
const makeFolders = async (admin: KeywardClient, projectId: string) => {
  const create = (environment: string, path: string, name: string) =>
    admin.folders.create({ body: { workspaceId: projectId, environment, path, name } }).then(setupOk);
  const tops = ENVIRONMENTS.flatMap((env) => Array.from({ length: TOP }, (_, t) => [env, `svc-${t}`] as const));
  await inParallel(tops, 4, ([env, name]) => create(env, "/", name));
  const subs = tops.flatMap(([env, top]) => Array.from({ length: SUB }, (_, s) => [env, top, `part-${s}`] as const));
  await inParallel(subs, 4, ([env, top, name]) => create(env, `/${top}`, name));
};

const seedSecrets = async (projectId: string, dbTagId: string) => {
  const { rows: keyRows } = await db.query<{ id: string; wrapped_key: string }>(
    "select id, wrapped_key from project_data_keys where project_id = $1",
    [projectId],
  );
  const keyRow = keyRows[0]!;
  const box = createSecretBox(rootKey);
  const dataKey = dataKeyOf(
    keyRow.id,
    Buffer.from(box.decrypt(keyRow.wrapped_key, `project-data-key:${projectId}`), "base64"),
  );
  const { rows: folders } = await db.query<{ id: string }>(
    `select f.id from secret_folders f join environments e on e.id = f.env_id where e.project_id = $1 order by f.id`,
    [projectId],
  );
  const CHUNK = 5_000;
  for (let start = 0; start < SECRETS; start += CHUNK) {
    const ids: string[] = [];
    const folderIds: string[] = [];
    const keys: string[] = [];
    const fields: string[] = [];
    const tagged: string[] = [];
    for (let i = start; i < Math.min(SECRETS, start + CHUNK); i++) {
      const id = randomUUID();
      const word = WORDS[i % WORDS.length]!;
      ids.push(id);
      folderIds.push(folders[i % folders.length]!.id);
      keys.push(`${word}_${PARTS[Math.floor(i / WORDS.length) % PARTS.length]}_${i}`);
      const sealed = sealFields(dataKey, "secrets", id, {
        value: `value-${i}-${"x".repeat(32)}`,
        comment: "",
        metadata: [],
      });
      fields.push(sealed.encrypted_fields);
      if (word === "DB" && i % 3 === 0) tagged.push(id);
    }
    await db.query(
      `insert into secrets (id, folder_id, key, type, version, encrypted_fields, metadata)
       select id, folder_id, key, 'shared', 1, fields, '[]'::jsonb
       from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) as t(id, folder_id, key, fields)`,
      [ids, folderIds, keys, fields],
    );
    await db.query(`insert into secret_tag_links (secret_id, tag_id) select unnest($1::uuid[]), $2::uuid`, [
      tagged,
      dbTagId,
    ]);
  }
  await db.query("vacuum analyze secrets");
  await db.query("vacuum analyze secret_tag_links");
  await db.query("vacuum analyze secret_folders");
};

/** An identity that may describe and read only in dev under /svc-1. */
const restrictedClient = async (admin: KeywardClient, projectId: string, orgId: string) => {
  setupOk(
    await admin.roles.create({
      params: { projectId },
      body: {
        slug: "svc-1-dev",
        name: "svc-1 in dev",
        permissions: [
          {
            subject: "secrets",
            action: ["describeSecret", "readValue"],
            conditions: { environment: "dev", secretPath: { $glob: "/svc-1/**" } },
          },
        ],
      },
    }),
  );
  const { identity } = setupOk(
    await admin.identities.create({ body: { name: "search-bench", organizationId: orgId, role: "no-access" } }),
  );
  setupOk(await admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { accessToken } = setupOk(await admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
  setupOk(
    await admin.projects.addIdentityMembership({
      params: { projectId, identityId: identity.id },
      body: { role: "svc-1-dev" },
    }),
  );
  return accessToken;
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** One request at a time; the first few warm caches and plans and are not counted. */
const measure = async (token: string, path: string) => {
  const times: number[] = [];
  let hits = 0;
  for (let i = 0; i < REQUESTS + 5; i++) {
    const started = performance.now();
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { secrets?: unknown[] };
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    if (i >= 5) times.push(performance.now() - started);
    hits = body.secrets!.length;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), hits };
};

try {
  await db.connect();
  const boot = await createKeywardClient({ baseUrl: server.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  const { identity, organization } = setupOk(boot);
  const token = identity.credentials.token;
  const admin = createKeywardClient({ baseUrl: server.url, token });
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "search-bench" } }));
  const seedStarted = performance.now();
  await makeFolders(admin, project.id);
  const { tag } = setupOk(
    await admin.secretTags.projects.create({ params: { projectId: project.id }, body: { slug: "db", color: "" } }),
  );
  // One secret through the API creates the project's data key, which the bulk rows are sealed under.
  setupOk(
    await admin.secretsV4.create({
      params: { secretName: "FIRST" },
      body: { projectId: project.id, environment: "dev", secretValue: "first" },
    }),
  );
  await seedSecrets(project.id, tag.id);
  const { rows } = await db.query<{ folders: string; secrets: string }>(
    `select (select count(*) from secret_folders f join environments e on e.id = f.env_id where e.project_id = $1) as folders,
       (select count(*) from secrets s join secret_folders f on f.id = s.folder_id join environments e on e.id = f.env_id
         where e.project_id = $1) as secrets`,
    [project.id],
  );
  console.log(
    `seeded ${rows[0]!.folders} folders, ${rows[0]!.secrets} secrets in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );
  const restricted = await restrictedClient(admin, project.id, organization.id);
  const base = `/api/v1/projects/${project.id}/secrets/search`;
  const queries: [string, string, string][] = [
    ["substring 'password' (12.5% match)", token, `${base}?key=password`],
    ["substring 'smtp_host_4245' (one match)", token, `${base}?key=smtp_host_4245`],
    ["glob 'DB_*' (10% match)", token, `${base}?key=DB_*`],
    ["glob 'S3_{HOST,PORT}_*6'", token, `${base}?key=S3_%7BHOST,PORT%7D_*6`],
    ["tag db (~3,300 secrets)", token, `${base}?tag=db`],
    ["path prefix /svc-3, all environments", token, `${base}?path=/svc-3`],
    ["path glob /svc-*/part-1 + env dev", token, `${base}?path=/svc-*/part-1&environment=dev`],
    ["no filter, limit 200", token, `${base}?limit=200`],
    ["no filter, values, limit 200", token, `${base}?limit=200&includeValues=true`],
    ["restricted caller (dev, /svc-1/**), 'token'", restricted, `${base}?key=token`],
  ];
  console.log(
    `\none connection, ${REQUESTS} requests per query after 5 warm-up requests; target p99 <= ${TARGET_MS} ms`,
  );
  for (const [label, who, path] of queries) {
    const r = await measure(who, path);
    const verdict = r.p99 <= TARGET_MS ? "ok" : "OVER";
    console.log(
      `${label.padEnd(46)} hits ${String(r.hits).padStart(3)}   p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   target ${TARGET_MS} ms ${verdict}`,
    );
  }
} finally {
  await db.end().catch(() => undefined);
  await server.stop();
  pgServer.stop();
}
