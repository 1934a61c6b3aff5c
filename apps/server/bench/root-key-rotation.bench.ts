import { randomBytes, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import { createSecretBox } from "../src/crypto/envelope";
import { setupOk } from "./lib/endpoint";
import { startKeyward } from "./lib/keyward";

/**
 * A root-key rotation of BENCH_DATA_KEYS (100,000) project data keys on PostgreSQL 15, with secret
 * reads running beside it: how long the re-wrap takes and what it does to the reads' latency. The
 * pace is ROOT_KEY_REWRAP_BATCH_SIZE / ROOT_KEY_REWRAP_PAUSE_MS (BENCH_BATCH, BENCH_PAUSE_MS).
 */
const DATA_KEYS = Number(process.env.BENCH_DATA_KEYS ?? 100_000);
const READERS = 8;
const key = randomBytes(32);

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? NaN;

const main = async () => {
  const batch = process.env.BENCH_BATCH ?? "500";
  const pause = process.env.BENCH_PAUSE_MS ?? "0";
  const target = await startKeyward("postgres", {
    env: { ENCRYPTION_KEY: key.toString("base64"), ROOT_KEY_REWRAP_BATCH_SIZE: batch, ROOT_KEY_REWRAP_PAUSE_MS: pause },
  });
  const db = new pg.Client({ connectionString: target.databaseUrl });
  await db.connect();
  try {
    const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
    const project = setupOk(
      await admin.projects.create({ body: { projectName: "read", type: "secret-manager" } }),
    ).project;
    const where = { projectId: project.id, environment: "dev", secretPath: "/" };
    setupOk(await admin.secretsV4.create({ params: { secretName: "K" }, body: { ...where, secretValue: "v" } }));
    // The other data keys, sealed under version 1 as the server seals them, in bulk.
    const box = createSecretBox(key);
    const orgId = (await db.query<{ org_id: string }>("select org_id from projects where id = $1", [project.id]))
      .rows[0]!.org_id;
    for (let done = 0; done < DATA_KEYS; done += 5_000) {
      const ids = Array.from({ length: Math.min(5_000, DATA_KEYS - done) }, () => randomUUID());
      await db.query(
        `insert into projects (id, org_id, name, slug, type) select id, $1, id::text, id::text, 'secret-manager' from unnest($2::uuid[]) id`,
        [orgId, ids],
      );
      const wrapped = ids.map((id) => box.encrypt(randomBytes(32).toString("base64"), `project-data-key:${id}`));
      await db.query(
        `insert into project_data_keys (project_id, wrapped_key) select * from unnest($1::uuid[], $2::text[])`,
        [ids, wrapped],
      );
    }
    const root = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
    const reads = async (stop: () => boolean) => {
      const latencies: number[] = [];
      let errors = 0;
      await Promise.all(
        Array.from({ length: READERS }, async () => {
          while (!stop()) {
            const started = performance.now();
            const res = await admin.secretsV4.get({ params: { secretName: "K" }, query: where });
            latencies.push(performance.now() - started);
            if (res.status !== 200) errors += 1;
          }
        }),
      );
      return { latencies, errors };
    };
    const idleUntil = performance.now() + 5_000;
    const idle = await reads(() => performance.now() > idleUntil);
    const started = performance.now();
    const rotation = await root.rootKeys.startRotation({ body: {} });
    if (rotation.status !== 202) throw new Error(JSON.stringify(rotation.body));
    let completed = false;
    const during = reads(() => completed);
    let status = rotation.body.rotation;
    while (status.status === "running") {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = setupOk(await root.rootKeys.getRotation({ params: { rotationId: status.id } })).rotation;
    }
    const seconds = (performance.now() - started) / 1000;
    completed = true;
    const busy = await during;
    console.log(
      `root-key rotation, PostgreSQL 15, batch ${batch}, pause ${pause} ms: ${status.status}, ${status.rewrapped} of ${status.total} rows re-wrapped in ${seconds.toFixed(1)} s (${(status.rewrapped / seconds).toFixed(0)} rows/s)`,
    );
    for (const [label, run] of [
      ["idle", idle],
      ["during the rotation", busy],
    ] as const)
      console.log(
        `  secret reads ${label} (${READERS} connections): ${run.latencies.length} reads, p50 ${percentile(run.latencies, 0.5).toFixed(1)} ms, p99 ${percentile(run.latencies, 0.99).toFixed(1)} ms, ${run.errors} errors`,
      );
  } finally {
    await db.end();
    await target.stop();
  }
};

await main();
