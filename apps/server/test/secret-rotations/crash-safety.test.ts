import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { createFreshDatabase } from "@keyward/test-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../../src/crypto/envelope";
import { sealConnectionCredentials } from "../../src/modules/app-connections/app-connection.credentials";
import { expectOk } from "../helpers/tenant";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";
import { postgresTarget } from "./helpers";

/**
 * Server processes killed at each step of a rotation (KEYWARD_FAILPOINT: SIGKILL, no cleanup), then
 * another process started on the same database: the rotation is finished with the same password,
 * once; no credential is lost. Then two instances with auto rotation: each due rotation runs once.
 */
const ENCRYPTION_KEY = randomBytes(32).toString("base64");
/** Run in the suite's PostgreSQL pass only: the processes use a database of their own either way. */
const onPostgres = process.env.DATABASE_URL !== undefined;
let databaseUrl: string;
let rootToken: string;
let projectId: string;
let rotationId: string;
let target: Awaited<ReturnType<typeof postgresTarget>>;
const live: Spawned[] = [];

const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: databaseUrl,
  ENCRYPTION_KEY,
  // One serving process: a failpoint kills the server itself, not a cluster worker its primary replaces.
  WORKERS: "1",
  ALLOW_PRIVATE_OUTBOUND: "loopback",
  ROTATION_INTERVAL_UNIT_S: "1",
  ROTATION_INTERVAL_MS: "200",
  ROTATION_CLAIM_TTL_S: "1",
  ...extra,
});

const start = async (extra: Record<string, string> = {}, bootstrap = false) => {
  const server = await spawnKeyward(env(extra), { bootstrap });
  live.push(server);
  return server;
};

const query = async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []) => {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
};

const rotationRow = async () =>
  (
    await query<{ active_index: number; has_intent: boolean; rotation_status: string }>(
      "select active_index, encrypted_intent is not null as has_intent, rotation_status from secret_rotations where id = $1",
      [rotationId],
    )
  )[0]!;

/** The mapped pair as a service reads it: one list of the folder, so both values are from the same moment. */
const mapped = async (server: Spawned) => {
  const { secrets } = expectOk(
    await server.client(rootToken).secretsV4.list({ query: { projectId, environment: "dev", secretPath: "/db" } }),
  );
  const read = (key: string) => secrets.find((s) => s.secretKey === key)!;
  const [username, password] = [read("DB_USERNAME"), read("DB_PASSWORD")];
  return { username: username.secretValue, password: password.secretValue, version: password.version };
};

const until = async (what: string, check: () => Promise<boolean>, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

beforeAll(async () => {
  if (!onPostgres) return;
  const targetUrl = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!targetUrl) throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup did not start PostgreSQL");
  databaseUrl = await createFreshDatabase(targetUrl, "keyward_rotation");
  target = await postgresTarget();
  const first = await start({}, true);
  rootToken = first.rootToken;
  const root = first.client(rootToken);
  projectId = expectOk(await root.projects.create({ body: { projectName: "rotated", type: "secret-manager" } })).project
    .id;
  expectOk(await root.folders.create({ body: { workspaceId: projectId, environment: "dev", path: "/", name: "db" } }));
  const connectionId = randomUUID();
  const box = { secretBox: createSecretBox(Buffer.from(ENCRYPTION_KEY, "base64")) };
  await query(
    `insert into app_connections (id, org_id, app, name, method, encrypted_credentials, credentials_hash)
     values ($1, $2, 'postgres', 'target', 'username-and-password', $3, 'test')`,
    [connectionId, first.orgId, sealConnectionCredentials(box, connectionId, target.connection)],
  );
  const created = expectOk(
    await root.secretRotations.postgresCredentials.create({
      body: {
        name: "db-credentials",
        projectId,
        connectionId,
        environment: "dev",
        secretPath: "/db",
        isAutoRotationEnabled: false,
        rotationInterval: 1,
        parameters: target.parameters,
        secretsMapping: { username: "DB_USERNAME", password: "DB_PASSWORD" },
      },
    }),
  );
  rotationId = created.secretRotation.id;
  await stopKeyward(first);
}, 120_000);

afterAll(async () => {
  await Promise.all(live.map((server) => stopKeyward(server)));
});

describe.runIf(onPostgres)("a rotation cut short by a crash", () => {
  it.each(["rotation-after-intent", "rotation-after-password", "rotation-before-secrets", "rotation-before-active"])(
    "killed at %s, is finished by the next process with the same password, once",
    async (failpoint) => {
      const before = await rotationRow();
      const dying = await start({ KEYWARD_FAILPOINT: failpoint });
      const beforeSecrets = await mapped(dying);
      await expect(
        dying.client(rootToken).secretRotations.postgresCredentials.rotate({ params: { rotationId } }),
      ).rejects.toThrow();
      const [, signal] = await dying.exited;
      expect(signal).toBe("SIGKILL");
      expect((await rotationRow()).has_intent).toBe(true);

      const next = await start();
      await until("the rotation to be finished", async () => !(await rotationRow()).has_intent).catch(
        (error: Error) => {
          throw new Error(`${error.message}; server log: ${next.logs().join("\n")}`);
        },
      );
      const after = await rotationRow();
      expect(after.active_index).toBe((before.active_index + 1) % 2);
      expect(after.rotation_status).toBe("success");
      const secrets = await mapped(next);
      expect(secrets.version).toBe(beforeSecrets.version + 1);
      expect(await target.canLogin(secrets.username, secrets.password)).toBe(true);
      // The previously active credential still logs in: no downtime for a service that read it.
      expect(await target.canLogin(beforeSecrets.username, beforeSecrets.password)).toBe(true);
      await stopKeyward(next);
    },
    60_000,
  );
});

describe.runIf(onPostgres)("two instances and rotations due every second", () => {
  it("runs each due rotation once, and a reader in a loop never holds a credential that fails", async () => {
    const [a, b] = [await start(), await start()];
    const start0 = await mapped(a);
    const since = new Date();
    expectOk(
      await a.client(rootToken).secretRotations.postgresCredentials.update({
        params: { rotationId },
        body: { isAutoRotationEnabled: true, rotationInterval: 1 },
      }),
    );
    let reads = 0;
    let failed = 0;
    const stopAt = Date.now() + 6_000;
    while (Date.now() < stopAt) {
      const current = await mapped(reads % 2 === 0 ? a : b);
      reads += 1;
      if (!(await target.canLogin(current.username, current.password))) failed += 1;
    }
    expectOk(
      await a.client(rootToken).secretRotations.postgresCredentials.update({
        params: { rotationId },
        body: { isAutoRotationEnabled: false },
      }),
    );
    await until("the last rotation to end", async () => !(await rotationRow()).has_intent);
    const end = await mapped(a);
    const rotations = end.version - start0.version;
    expect(rotations).toBeGreaterThanOrEqual(3);
    const events = await query<{ n: number }>(
      `select count(*)::int as n from audit_logs where event_type = 'secret-rotation-rotate-secrets'
         and event_metadata->>'status' = 'success' and actor_type = 'platform' and created_at >= $1`,
      [since],
    );
    // One success event per new version: no rotation ran twice.
    expect(events[0]!.n).toBe(rotations);
    expect(failed).toBe(0);
    expect(reads).toBeGreaterThan(10);
  }, 60_000);
});
