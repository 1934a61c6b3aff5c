import { createFreshDatabase } from "@keyward/test-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretSyncJob } from "../../src/modules/secret-syncs/secret-sync.job";
import { startBareTestApp, type BareTestApp } from "../helpers/app";
import { expectOk, uniqueName } from "../helpers/tenant";
import { createSyncTenant, startSyncWorldWith, type SyncWorld } from "./helpers";

/**
 * Two instances on one PostgreSQL database, both running the sync job: a change is pushed once.
 * Run in the suite's PostgreSQL pass (PGlite has one process).
 */
const onPostgres = process.env.DATABASE_URL !== undefined;
let world: SyncWorld & { caFile: string };
let second: BareTestApp;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  const targetUrl = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!targetUrl) throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup did not start PostgreSQL");
  const databaseUrl = await createFreshDatabase(targetUrl, "keyward_syncs");
  world = await startSyncWorldWith({ DATABASE_URL: databaseUrl });
  second = await startBareTestApp({
    DATABASE_URL: databaseUrl,
    OUTBOUND_EXTRA_CA_FILE: world.caFile,
    SECRET_SYNC_DEBOUNCE_MS: "50",
  });
  stops.push(secretSyncJob.start(world.app.deps), secretSyncJob.start(second.deps));
}, 120_000);

afterAll(async () => {
  if (!onPostgres) return;
  for (const stop of stops) await stop();
  await second?.close();
  await world?.close();
});

const until = async (check: () => boolean, what: string) => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > 10_000) throw new Error(`${what} did not happen within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe.runIf(onPostgres)("secret syncs on two instances of one PostgreSQL", () => {
  it("pushes each change once, whichever instance takes it", async () => {
    const t = await createSyncTenant(world, { TWICE: "1" });
    const sync = expectOk(
      await t.admin.secretSyncs.awsSecretsManager.create({
        body: {
          name: uniqueName("sync"),
          projectId: t.projectId,
          connectionId: t.awsConnectionId,
          environment: "dev",
          secretPath: "/app",
          syncOptions: {},
          destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
        } as never,
      }),
    ).secretSync;
    await until(() => world.aws.secrets.get("TWICE")?.value === "1", "the first push");
    const writes = () => world.aws.calls.filter((c) => ["CreateSecret", "UpdateSecret"].includes(c.operation)).length;
    expect(writes()).toBe(1);
    for (const value of ["2", "3"]) {
      expectOk(
        await t.admin.secretsV3.update({
          params: { secretName: "TWICE" },
          body: { workspaceId: t.projectId, environment: "dev", secretPath: "/app", secretValue: value },
        }),
      );
      await until(() => world.aws.secrets.get("TWICE")?.value === value, `the push of ${value}`);
    }
    // Both jobs stopped (each waits for its pass in flight): nothing more can be written.
    for (const stop of stops.splice(0)) await stop();
    expect(writes()).toBe(3);
    const after = expectOk(await t.admin.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } })).secretSync;
    expect(after.syncStatus).toBe("succeeded");
  });
});
