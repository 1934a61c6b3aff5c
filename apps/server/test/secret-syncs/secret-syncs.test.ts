import { describe, expect, it } from "vitest";
import { secretSyncJob, syncPass } from "../../src/modules/secret-syncs/secret-sync.job";
import { auditEvents } from "../audit/helpers";
import { expectOk, uniqueName } from "../helpers/tenant";
import {
  AWS_KEY,
  PAT,
  createSyncTenant,
  deleteSecret,
  later,
  setSecret,
  smSync,
  syncSource,
  useSyncWorld,
} from "./helpers";

const current = useSyncWorld();

/** Every answer a test saw, to prove no credential was ever in one. */
const answers: string[] = [];
const seen = <T>(body: T) => {
  answers.push(JSON.stringify(body));
  return body;
};

describe("app connections for AWS and GitHub", () => {
  it("checks the credentials with the provider, answers only the allowed fields, and refuses bad ones", async () => {
    const world = current();
    const t = await createSyncTenant(world, {});
    const aws = seen(expectOk(await t.admin.appConnections.aws.get({ params: { connectionId: t.awsConnectionId } })));
    expect(aws.appConnection.credentials).toEqual({ accessKeyId: AWS_KEY.accessKeyId });
    const gh = seen(
      expectOk(await t.admin.appConnections.github.get({ params: { connectionId: t.githubConnectionId } })),
    );
    expect(gh.appConnection.credentials).toEqual({ instanceType: "server", host: world.githubHost });
    expect(world.aws.calls.some((c) => c.service === "sts" && c.accessKeyId === AWS_KEY.accessKeyId)).toBe(true);

    const badKey = await t.admin.appConnections.aws.create({
      body: { name: uniqueName("aws"), method: "access-key", credentials: { ...AWS_KEY, secretAccessKey: "wrong" } },
    });
    expect(badKey.status).toBe(400);
    expect(JSON.stringify(badKey.body)).toContain("Unable to validate connection");
    expect(JSON.stringify(badKey.body)).not.toContain("wrong");
    const badToken = await t.admin.appConnections.github.create({
      body: {
        name: uniqueName("gh"),
        method: "pat",
        credentials: { personalAccessToken: "ghp_nope", instanceType: "server", host: world.githubHost },
      },
    });
    expect(badToken.status).toBe(400);
    expect(JSON.stringify(badToken.body)).toContain("Unable to validate Personal Access Token");
    const noHost = await t.admin.appConnections.github.create({
      body: {
        name: uniqueName("gh"),
        method: "pat",
        credentials: { personalAccessToken: PAT, instanceType: "server" },
      },
    });
    expect(noHost.status).toBe(422);
    const options = expectOk(await t.admin.appConnections.options());
    expect(options.appConnectionOptions.map((o) => o.app)).toEqual(expect.arrayContaining(["aws", "github"]));
  });
});

describe("secret syncs", () => {
  it("pushes a folder to Secrets Manager and never touches what it did not write", async () => {
    const world = current();
    const t = await createSyncTenant(world, { DB_URL: "postgres://a", API_KEY: "k1", SHARED_KEY: "from-keyward" });
    const foreignName = `FOREIGN_${t.projectId.slice(0, 8)}`;
    world.aws.seedSecret(foreignName, "theirs");
    world.aws.seedSecret("SHARED_KEY", "theirs-shared");
    const sync = seen(await smSync(t));
    expect(sync.syncStatus).toBe("pending");
    expect(sync.connection).toMatchObject({ app: "aws", id: t.awsConnectionId });
    await syncPass(world.app.deps);
    const after = seen(
      expectOk(await t.admin.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } })),
    ).secretSync;
    expect(after.syncStatus).toBe("succeeded");
    expect(after.lastSyncedAt).not.toBeNull();
    expect(after.lastSyncMessage).toContain("SHARED_KEY");
    expect(world.aws.secrets.get("DB_URL")?.value).toBe("postgres://a");
    expect(world.aws.secrets.get("API_KEY")?.value).toBe("k1");
    expect(world.aws.secrets.get("SHARED_KEY")?.value).toBe("theirs-shared");
    expect(world.aws.secrets.get(foreignName)?.value).toBe("theirs");

    // A change and a delete arrive; the foreign secrets stay as they are.
    await setSecret(t, "API_KEY", "k2");
    await deleteSecret(t, "DB_URL");
    await syncPass(world.app.deps);
    expect(world.aws.secrets.get("API_KEY")?.value).toBe("k2");
    expect(world.aws.secrets.get("DB_URL")?.deletedAt).toBeDefined();
    expect(world.aws.secrets.get("SHARED_KEY")?.value).toBe("theirs-shared");

    // A value changed behind Keyward's back is repaired by the next run.
    world.aws.secrets.get("API_KEY")!.value = "tampered";
    seen(expectOk(await t.admin.secretSyncs.awsSecretsManager.syncSecrets({ params: { syncId: sync.id } })));
    await syncPass(world.app.deps);
    expect(world.aws.secrets.get("API_KEY")?.value).toBe("k2");
    const repaired = expectOk(await t.admin.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } }));
    expect(repaired.secretSync.lastSyncMessage).toContain("Corrected 1 secret(s) changed at the destination: API_KEY");
    // Without a trigger, a sync not pushed for SECRET_SYNC_RECHECK_S compares again by itself.
    world.aws.secrets.get("API_KEY")!.value = "tampered-again";
    await later(world.app, 2 * 3_600_000, () => syncPass(world.app.deps));
    expect(world.aws.secrets.get("API_KEY")?.value).toBe("k2");
    // Every call was signed with the connection's key for the configured region.
    expect(world.aws.calls.every((c) => c.accessKeyId === AWS_KEY.accessKeyId && c.region === "us-east-1")).toBe(true);

    // Remove takes only what the sync wrote; the foreign secrets stay.
    const removed = seen(
      expectOk(await t.admin.secretSyncs.awsSecretsManager.removeSecrets({ params: { syncId: sync.id } })),
    ).secretSync;
    expect(removed.removeStatus).toBe("succeeded");
    expect(world.aws.secrets.get("API_KEY")?.deletedAt).toBeDefined();
    expect(world.aws.secrets.get("SHARED_KEY")?.deletedAt).toBeUndefined();
    expect(world.aws.secrets.get("SHARED_KEY")?.value).toBe("theirs-shared");
    expect(world.aws.secrets.get(foreignName)?.deletedAt).toBeUndefined();

    const events = (await auditEvents(t)).map((e) => e.event);
    const types = events.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(["create-secret-sync", "secret-sync-sync-secrets", "secret-sync-remove-secrets"]),
    );
    const runs = events.filter((e) => e.type === "secret-sync-sync-secrets" && e.metadata.syncStatus === "succeeded");
    expect(runs.every((r) => r.metadata.syncId === sync.id)).toBe(true);
    expect(runs.map((r) => r.metadata.createdSecretKeys)).toContainEqual(["API_KEY", "DB_URL"]);
    expect(runs.map((r) => r.metadata.updatedSecretKeys)).toContainEqual(["API_KEY"]);
    expect(JSON.stringify(events)).not.toContain("postgres://a");
    expect(JSON.stringify(events)).not.toContain(AWS_KEY.secretAccessKey);
  });

  it("plans before it pushes, and the plan changes nothing", async () => {
    const world = current();
    const t = await createSyncTenant(world, { PLAN_A: "1", PLAN_SHARED: "2", EMPTY: "" });
    world.aws.seedSecret("PLAN_SHARED", "theirs");
    const body = {
      ...syncSource(t, t.awsConnectionId),
      syncOptions: {},
      destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
    } as never;
    const { plan } = expectOk(await t.admin.secretSyncs.awsSecretsManager.planNew({ body }));
    expect(plan.create).toEqual(["PLAN_A"]);
    expect(plan.skipped).toEqual([
      { key: "EMPTY", reason: "empty-value" },
      { key: "PLAN_SHARED", reason: "exists-unowned" },
    ]);
    expect(world.aws.secrets.has("PLAN_A")).toBe(false);
    const sync = await smSync(t, { unownedSecrets: "overwrite" });
    const next = expectOk(await t.admin.secretSyncs.awsSecretsManager.plan({ params: { syncId: sync.id } })).plan;
    expect(next.create).toEqual(["PLAN_A"]);
    expect(next.update).toEqual(["PLAN_SHARED"]);
    await syncPass(world.app.deps);
    expect(world.aws.secrets.get("PLAN_SHARED")?.value).toBe("2");
  });

  it("writes Parameter Store parameters under the path and leaves other paths alone", async () => {
    const world = current();
    const t = await createSyncTenant(world, { ALPHA: "a" });
    const path = `/kw-${t.projectId.slice(0, 8)}/`;
    world.aws.parameters.set("/other-team/ALPHA", {
      value: "theirs",
      type: "SecureString",
      version: 1,
      lastModifiedAt: new Date(),
    });
    const sync = expectOk(
      await t.admin.secretSyncs.awsParameterStore.create({
        body: {
          ...syncSource(t, t.awsConnectionId),
          syncOptions: {},
          destinationConfig: { region: "us-east-1", path },
        },
      }),
    ).secretSync;
    await syncPass(world.app.deps);
    expect(world.aws.parameters.get(`${path}ALPHA`)?.value).toBe("a");
    expect(world.aws.parameters.get(`${path}ALPHA`)?.type).toBe("SecureString");

    // A failing destination shows failed with its error code, and recovers by itself.
    world.aws.setMode("ssm", "500");
    await setSecret(t, "ALPHA", "b");
    await syncPass(world.app.deps);
    const failed = expectOk(
      await t.admin.secretSyncs.awsParameterStore.get({ params: { syncId: sync.id } }),
    ).secretSync;
    expect(failed.syncStatus).toBe("failed");
    expect(failed.lastSyncMessage).toContain("InternalFailure");
    expect(failed.nextAttemptAt).not.toBeNull();
    world.aws.setMode("ssm", "ok");
    await later(world.app, 60_000, () => syncPass(world.app.deps));
    expect(world.aws.parameters.get(`${path}ALPHA`)?.value).toBe("b");
    const healed = expectOk(
      await t.admin.secretSyncs.awsParameterStore.get({ params: { syncId: sync.id } }),
    ).secretSync;
    expect(healed.syncStatus).toBe("succeeded");
    const types = (await auditEvents(t)).map((e) => [e.event.type, e.event.metadata.syncStatus]);
    expect(types).toContainEqual(["secret-sync-sync-secrets", "failed"]);

    // Deleting without removeSecrets keeps the parameters (no longer the sync's); with it, they go.
    expectOk(await t.admin.secretSyncs.awsParameterStore.delete({ params: { syncId: sync.id }, query: {} }));
    expect(world.aws.parameters.get(`${path}ALPHA`)?.value).toBe("b");
    expect(world.aws.parameters.get("/other-team/ALPHA")?.value).toBe("theirs");
  });

  it("pushes sealed values to GitHub and deletes with removeSecrets only its own", async () => {
    const world = current();
    const t = await createSyncTenant(world, { token: "t1", shared_key: "mine" });
    world.github.seed("repos/acme/app", "SHARED_KEY", "theirs");
    world.github.seed("repos/acme/app", "FOREIGN_ONLY", "theirs");
    const sync = expectOk(
      await t.admin.secretSyncs.github.create({
        body: {
          ...syncSource(t, t.githubConnectionId),
          syncOptions: { initialSyncBehavior: "overwrite-destination" },
          destinationConfig: { scope: "repository", owner: "acme", repo: "app" },
        } as never,
      }),
    ).secretSync;
    await syncPass(world.app.deps);
    const repo = world.github.repoSecrets("acme", "app");
    expect(repo.get("TOKEN")?.value).toBe("t1");
    expect(repo.get("SHARED_KEY")?.value).toBe("theirs");
    const puts = world.github.puts.length;
    await syncPass(world.app.deps);
    expect(world.github.puts.length).toBe(puts);
    await setSecret(t, "token", "t2");
    await syncPass(world.app.deps);
    expect(repo.get("TOKEN")?.value).toBe("t2");
    expectOk(
      await t.admin.secretSyncs.github.delete({ params: { syncId: sync.id }, query: { removeSecrets: "true" } }),
    );
    expect(repo.has("TOKEN")).toBe(false);
    expect(repo.get("SHARED_KEY")?.value).toBe("theirs");
    expect(repo.get("FOREIGN_ONLY")?.value).toBe("theirs");
    const gone = await t.admin.secretSyncs.github.get({ params: { syncId: sync.id } });
    expect(gone.status).toBe(404);
  });

  it("delivers a change by itself: the events wake the sync job, which pushes within seconds", async () => {
    const world = current();
    const t = await createSyncTenant(world, { LIVE: "1" });
    const sync = await smSync(t);
    const stop = secretSyncJob.start(world.app.deps);
    try {
      const arrived = async (value: string) => {
        const started = Date.now();
        while (world.aws.secrets.get("LIVE")?.value !== value) {
          if (Date.now() - started > 10_000) throw new Error(`LIVE did not become ${value} within 10 s`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        return Date.now() - started;
      };
      await arrived("1");
      await setSecret(t, "LIVE", "2");
      expect(await arrived("2")).toBeLessThan(5_000);
    } finally {
      await stop();
    }
    const after = expectOk(await t.admin.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } })).secretSync;
    expect(after.syncStatus).toBe("succeeded");
  });

  it("follows references: a change in a referenced folder reaches the syncs of the folders that use it", async () => {
    const world = current();
    const t = await createSyncTenant(world, {});
    expectOk(
      await t.admin.folders.create({ body: { projectId: t.projectId, environment: "dev", name: "shared", path: "/" } }),
    );
    for (const [secretPath, secretName, secretValue] of [
      ["/shared", "BASE", "one"],
      ["/app", "REF_USER", "${dev.shared.BASE}-user"],
    ] as const)
      expectOk(
        await t.admin.secretsV3.create({
          params: { secretName },
          body: { workspaceId: t.projectId, environment: "dev", secretPath, secretValue },
        }),
      );
    await smSync(t);
    await syncPass(world.app.deps);
    expect(world.aws.secrets.get("REF_USER")?.value).toBe("one-user");
    expectOk(
      await t.admin.secretsV3.update({
        params: { secretName: "BASE" },
        body: { workspaceId: t.projectId, environment: "dev", secretPath: "/shared", secretValue: "two" },
      }),
    );
    await syncPass(world.app.deps);
    expect(world.aws.secrets.get("REF_USER")?.value).toBe("two-user");
  });

  it("never answered a credential", () => {
    const all = answers.join("\n");
    expect(all).not.toContain(AWS_KEY.secretAccessKey);
    expect(all).not.toContain(PAT);
    // The answers looked at include connections (with their shown fields) and syncs.
    expect(all).toContain(`"accessKeyId":"${AWS_KEY.accessKeyId}"`);
    expect(answers.length).toBeGreaterThan(5);
  });
});
