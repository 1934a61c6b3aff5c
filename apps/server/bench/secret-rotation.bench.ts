import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { createKeywardClient } from "@keyward/client";
import { createApp } from "../src/app/create-app";
import { buildDeps } from "../src/app/deps";
import { startJobs } from "../src/app/jobs";
import { createHttpServer } from "../src/app/server";
import { loadEnv } from "../src/env";
import { startMariadb } from "../test/services/mariadb";
import { startPostgresTarget } from "../test/services/postgres-target";
import { insertConnection, mysqlTarget, postgresTarget, type Target } from "../test/secret-rotations/helpers";
import { setupOk } from "./lib/endpoint";
import { startPostgres } from "./lib/processes";

/**
 * Secret rotation on real targets, Keyward on PostgreSQL in this process with its jobs running:
 * - the time of one manual rotation (new password set, login checked, secrets written) on
 *   PostgreSQL 15 and on MariaDB, over BENCH_ROTATIONS rotations (20);
 * - what a service reading the mapped secrets in a tight loop (one list of the folder, then a login)
 *   saw during those rotations on PostgreSQL: reads, and logins refused (expected 0: the previous
 *   credential stays valid for one more interval);
 * - 50 rotations due at once (25 connections, two rotations each): how long the job takes for all.
 */
const ROTATIONS = Number(process.env.BENCH_ROTATIONS ?? 20);
const DUE = 50;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const storage = await startPostgres();
const stopTarget = await startPostgresTarget();
const stopMariadb = await startMariadb();
const env = loadEnv({
  DATABASE_URL: storage.url,
  DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
  ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  ALLOW_PRIVATE_OUTBOUND: "loopback",
  LOG_LEVEL: "warn",
  ROTATION_INTERVAL_UNIT_S: "1",
  ROTATION_INTERVAL_MS: "100",
});
const { deps, handle } = await buildDeps(env, { dataDir: "memory://" });
const server = createHttpServer(createApp(deps), env);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const stopJobs = startJobs(deps, ["secret-rotation"]);
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
try {
  const boot = setupOk(
    await createKeywardClient({ baseUrl }).system.bootstrap({
      body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
    }),
  );
  const admin = createKeywardClient({ baseUrl, token: boot.identity.credentials.token });
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench-rotation" } }));
  let folders = 0;
  const create = async (target: Target, auto: boolean, shared?: string) => {
    const folder = `f${(folders += 1)}`;
    setupOk(
      await admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name: folder } }),
    );
    const connectionId = shared ?? (await insertConnection(deps, boot.organization.id, target.app, target.connection));
    const routes =
      target.app === "mysql" ? admin.secretRotations.mysqlCredentials : admin.secretRotations.postgresCredentials;
    const { secretRotation } = setupOk(
      await routes.create({
        body: {
          name: "bench",
          projectId: project.id,
          connectionId,
          environment: "dev",
          secretPath: `/${folder}`,
          isAutoRotationEnabled: auto,
          rotationInterval: auto ? 300 : 1,
          parameters: target.parameters,
          secretsMapping: { username: "DB_USER", password: "DB_PASSWORD" },
        },
      }),
    );
    return { routes, id: secretRotation.id, secretPath: `/${folder}` };
  };

  for (const [label, makeTarget] of [
    ["PostgreSQL 15", postgresTarget],
    ["MariaDB", mysqlTarget],
  ] as const) {
    const target = await makeTarget();
    const rotation = await create(target, false);
    const times: number[] = [];
    let reads = 0;
    let refused = 0;
    let reading = label.startsWith("PostgreSQL");
    const reader = (async () => {
      while (reading) {
        // One list, as a service reads its folder: both values from the same moment.
        const { secrets } = setupOk(
          await admin.secretsV4.list({
            query: { projectId: project.id, environment: "dev", secretPath: rotation.secretPath },
          }),
        );
        const value = (key: string) => secrets.find((s) => s.secretKey === key)!.secretValue;
        const [user, password] = [value("DB_USER"), value("DB_PASSWORD")];
        reads += 1;
        if (!(await target.canLogin(user, password))) refused += 1;
      }
    })();
    for (let i = 0; i < ROTATIONS; i += 1) {
      const started = performance.now();
      setupOk(await rotation.routes.rotate({ params: { rotationId: rotation.id } }));
      times.push(performance.now() - started);
    }
    reading = false;
    await reader;
    times.sort((a, b) => a - b);
    console.log(
      `${label}: one rotation p50 ${percentile(times, 0.5).toFixed(1)} ms, p99 ${percentile(times, 0.99).toFixed(1)} ms over ${ROTATIONS}`,
    );
    if (label.startsWith("PostgreSQL"))
      console.log(`  a reader in a tight loop during them: ${reads} reads and logins, ${refused} logins refused`);
  }

  // 50 due at once: 25 connections with two rotations each, made due together.
  const due: { id: string; secretPath: string }[] = [];
  for (let i = 0; i < DUE / 2; i += 1) {
    const first = await postgresTarget();
    const connectionId = await insertConnection(deps, boot.organization.id, "postgres", first.connection);
    due.push(await create(first, true, connectionId));
    due.push(await create(await postgresTarget(), true, connectionId));
  }
  const versions = async () =>
    Promise.all(
      due.map(
        async (r) =>
          setupOk(
            await admin.secretsV4.get({
              params: { secretName: "DB_PASSWORD" },
              query: { projectId: project.id, environment: "dev", secretPath: r.secretPath },
            }),
          ).secret.version,
      ),
    );
  const before = await versions();
  const started = performance.now();
  await deps.db
    .updateTable("secret_rotations")
    .set({ next_rotation_at: new Date() })
    .where("project_id", "=", project.id)
    .where("is_auto_rotation_enabled", "=", true)
    .execute();
  for (;;) {
    const now = await versions();
    if (now.every((v, i) => v > before[i]!)) break;
    if (performance.now() - started > 120_000) throw new Error("the due rotations did not complete within 120 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  console.log(
    `${DUE} rotations due at once (25 connections): all done in ${((performance.now() - started) / 1000).toFixed(2)} s`,
  );
} finally {
  await stopJobs();
  server.closeAllConnections();
  server.close();
  await handle.close();
  await stopMariadb();
  stopTarget();
  storage.stop();
}
