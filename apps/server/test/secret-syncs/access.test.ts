import { describe, expect, it } from "vitest";
import { runSync } from "../../src/modules/secret-syncs/sync-run";
import { SyncBusyError } from "../../src/modules/secret-syncs/sync-engine";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import { createSyncTenant, smSync, syncSource as base, useSyncWorld } from "./helpers";

const current = useSyncWorld();

describe("secret syncs: one run at a time, rights and input", () => {
  it("runs one sync once at a time", async () => {
    const world = current();
    const t = await createSyncTenant(world, { ONCE: "1" });
    const sync = await smSync(t);
    const outcomes = await Promise.allSettled([
      runSync(world.app.deps, sync.id, "manual"),
      runSync(world.app.deps, sync.id, "manual"),
    ]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(SyncBusyError);
  });

  it("refuses without rights, hides other organizations' syncs, and validates input", async () => {
    const world = current();
    const t = await createSyncTenant(world, { X: "1" });
    const sync = await smSync(t);
    const viewer = await createIdentity(t, { orgRole: "member", projectId: t.projectId, projectRole: "viewer" });
    const read = await viewer.client.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } });
    expect(read.status).toBe(200);
    for (const call of [
      () => viewer.client.secretSyncs.awsSecretsManager.syncSecrets({ params: { syncId: sync.id } }),
      () => viewer.client.secretSyncs.awsSecretsManager.removeSecrets({ params: { syncId: sync.id } }),
      () =>
        viewer.client.secretSyncs.awsSecretsManager.update({ params: { syncId: sync.id }, body: { description: "x" } }),
      () => viewer.client.secretSyncs.awsSecretsManager.delete({ params: { syncId: sync.id }, query: {} }),
    ])
      expect((await call()).status).toBe(403);
    const none = await createIdentity(t, { orgRole: "member", projectId: t.projectId, projectRole: "no-access" });
    expect((await none.client.secretSyncs.listAll({ query: { projectId: t.projectId } })).status).toBe(403);
    const sm = t.admin.secretSyncs.awsSecretsManager;
    expect((await none.client.secretSyncs.awsSecretsManager.list({ query: { projectId: t.projectId } })).status).toBe(
      403,
    );
    const byName = { params: { syncName: sync.name }, query: { projectId: t.projectId } };
    expect((await none.client.secretSyncs.awsSecretsManager.getByName(byName)).status).toBe(403);
    expect(expectOk(await sm.getByName(byName)).secretSync.id).toBe(sync.id);
    expect(expectOk(await sm.list({ query: { projectId: t.projectId } })).secretSyncs.map((x) => x.id)).toEqual([
      sync.id,
    ]);
    expect(expectOk(await t.admin.secretSyncs.github.list({ query: { projectId: t.projectId } })).secretSyncs).toEqual(
      [],
    );
    const unknown = await sm.getByName({ params: { syncName: "nope" }, query: { projectId: t.projectId } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ message: 'Could not find AWS Secrets Manager Sync with name "nope"' });
    // Another kind's name is not found either.
    expect((await t.admin.secretSyncs.github.getByName(byName)).status).toBe(404);

    const other = await createTenant(world.app);
    const byNameElsewhere = { params: { syncName: sync.name }, query: { projectId: t.projectId } };
    expect((await other.admin.secretSyncs.awsSecretsManager.getByName(byNameElsewhere)).status).toBe(404);
    expect((await other.admin.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } })).status).toBe(404);
    expect((await other.admin.secretSyncs.awsSecretsManager.syncSecrets({ params: { syncId: sync.id } })).status).toBe(
      404,
    );
    // The sync is not a GitHub one.
    expect((await t.admin.secretSyncs.github.get({ params: { syncId: sync.id } })).status).toBe(400);
    // Another organization's connection cannot be used.
    const otherT = await createSyncTenant(world, {});
    const foreignConn = await t.admin.secretSyncs.awsSecretsManager.create({
      body: {
        ...base(t, otherT.awsConnectionId),
        syncOptions: {},
        destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
      } as never,
    });
    expect(foreignConn.status).toBe(404);
    const noFolder = await t.admin.secretSyncs.awsSecretsManager.create({
      body: {
        ...base(t, t.awsConnectionId),
        secretPath: "/missing",
        syncOptions: {},
        destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
      } as never,
    });
    expect(noFolder.status).toBe(400);
    const badConfig = await t.admin.secretSyncs.awsSecretsManager.create({
      body: {
        ...base(t, t.awsConnectionId),
        syncOptions: {},
        destinationConfig: { region: "us-east-1", mappingBehavior: "many-to-one" },
      } as never,
    });
    expect(badConfig.status).toBe(422);
    const taken = await t.admin.secretSyncs.awsSecretsManager.create({
      body: {
        ...base(t, t.awsConnectionId),
        name: sync.name,
        syncOptions: {},
        destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
      } as never,
    });
    expect(taken.status).toBe(400);
    const options = expectOk(await t.admin.secretSyncs.options()).secretSyncOptions;
    expect(options.map((o) => o.destination)).toEqual([
      "aws-parameter-store",
      "aws-secrets-manager",
      "azure-key-vault",
      "gcp-secret-manager",
      "github",
    ]);
    expect(expectOk(await t.admin.secretSyncs.listAll({ query: { projectId: t.projectId } })).secretSyncs).toHaveLength(
      1,
    );
  });
});
