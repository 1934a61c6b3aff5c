import { describe, expect, it } from "vitest";
import { syncPass } from "../../src/modules/secret-syncs/secret-sync.job";
import { auditEvents } from "../audit/helpers";
import { expectOk, uniqueName } from "../helpers/tenant";
import {
  AZURE,
  GCP_PROJECT,
  createSyncTenant,
  deleteSecret,
  later,
  setSecret,
  syncSource as source,
  useSyncWorld,
} from "./helpers";

const current = useSyncWorld();

describe("GCP and Azure Key Vault connections", () => {
  it("get tokens with the credentials, show only who they are, and refuse bad ones", async () => {
    const world = current();
    const t = await createSyncTenant(world, {});
    const gcp = expectOk(await t.admin.appConnections.gcp.get({ params: { connectionId: t.gcpConnectionId } }));
    expect(gcp.appConnection.credentials).toEqual({
      clientEmail: world.gcp.serviceAccountKey.client_email,
      projectId: world.gcp.serviceAccountKey.project_id,
      privateKeyId: world.gcp.serviceAccountKey.private_key_id,
    });
    const azure = expectOk(
      await t.admin.appConnections.azureKeyVault.get({ params: { connectionId: t.azureConnectionId } }),
    );
    expect(azure.appConnection.credentials).toEqual({ tenantId: AZURE.tenantId, clientId: AZURE.clientId });
    expect(JSON.stringify([gcp, azure])).not.toContain("PRIVATE KEY");
    expect(JSON.stringify([gcp, azure])).not.toContain(AZURE.clientSecret);

    const wrongSecret = await t.admin.appConnections.azureKeyVault.create({
      body: { name: uniqueName("akv"), method: "client-secret", credentials: { ...AZURE, clientSecret: "nope" } },
    });
    expect(wrongSecret.status).toBe(400);
    expect(JSON.stringify(wrongSecret.body)).toContain("Unable to validate connection");
    expect(JSON.stringify(wrongSecret.body)).not.toContain("nope");
    const notAKey = await t.admin.appConnections.gcp.create({
      body: {
        name: uniqueName("gcp"),
        method: "service-account-key",
        credentials: { serviceAccountKey: "{}" },
      } as never,
    });
    expect(notAKey.status).toBe(422);
    const strangerKey = await t.admin.appConnections.gcp.create({
      body: {
        name: uniqueName("gcp"),
        method: "service-account-key",
        credentials: {
          serviceAccountKey: { ...world.gcp.serviceAccountKey, client_email: "someone@else.iam.gserviceaccount.com" },
        },
      } as never,
    });
    expect(strangerKey.status).toBe(400);
  });
});

describe("syncs to GCP Secret Manager and Azure Key Vault", () => {
  it("push to GCP, leave its foreign secrets alone, follow changes and deletes, and remove only their own", async () => {
    const world = current();
    const t = await createSyncTenant(world, { GCP_ONE: "1", GCP_SHARED: "mine" });
    const foreign = `FOREIGN_${t.projectId.slice(0, 8)}`;
    world.gcp.secrets.set(foreign, { versions: ["theirs"], createdAt: new Date() });
    world.gcp.secrets.set("GCP_SHARED", { versions: ["theirs"], createdAt: new Date() });
    const sync = expectOk(
      await t.admin.secretSyncs.gcpSecretManager.create({
        body: {
          ...source(t, t.gcpConnectionId),
          destinationConfig: { scope: "global", projectId: GCP_PROJECT },
        } as never,
      }),
    ).secretSync;
    await syncPass(world.app.deps);
    expect(world.gcp.latest("GCP_ONE")).toBe("1");
    expect(world.gcp.latest("GCP_SHARED")).toBe("theirs");
    const after = expectOk(await t.admin.secretSyncs.gcpSecretManager.get({ params: { syncId: sync.id } })).secretSync;
    expect(after.syncStatus).toBe("succeeded");
    expect(after.lastSyncMessage).toContain("GCP_SHARED");

    await setSecret(t, "GCP_ONE", "2");
    await syncPass(world.app.deps);
    expect(world.gcp.latest("GCP_ONE")).toBe("2");
    expect(world.gcp.secrets.get("GCP_ONE")?.versions).toEqual(["1", "2"]);
    await deleteSecret(t, "GCP_ONE");
    await syncPass(world.app.deps);
    expect(world.gcp.secrets.has("GCP_ONE")).toBe(false);
    expect(world.gcp.latest(foreign)).toBe("theirs");

    await setSecret(t, "GCP_SHARED", "mine-2");
    expectOk(
      await t.admin.secretsV3.create({
        params: { secretName: "GCP_TWO" },
        body: { workspaceId: t.projectId, environment: "dev", secretPath: "/app", secretValue: "two" },
      }),
    );
    await syncPass(world.app.deps);
    expect(world.gcp.latest("GCP_TWO")).toBe("two");
    const removed = expectOk(
      await t.admin.secretSyncs.gcpSecretManager.removeSecrets({ params: { syncId: sync.id } }),
    ).secretSync;
    expect(removed.removeStatus).toBe("succeeded");
    expect(world.gcp.secrets.has("GCP_TWO")).toBe(false);
    expect(world.gcp.latest("GCP_SHARED")).toBe("theirs");
    expect(world.gcp.latest(foreign)).toBe("theirs");
  });

  it("push to Azure Key Vault with its names, recover what it soft-deleted, and import", async () => {
    const world = current();
    const t = await createSyncTenant(world, { DB_URL: "db", AKV_KEEP: "k" });
    world.azure.seed("AKV-FOREIGN", "theirs");
    const sync = expectOk(
      await t.admin.secretSyncs.azureKeyVault.create({
        body: { ...source(t, t.azureConnectionId), destinationConfig: { vaultBaseUrl: world.azure.url } },
      }),
    ).secretSync;
    await syncPass(world.app.deps);
    expect(world.azure.latest("DB-URL")).toBe("db");
    expect(world.azure.latest("AKV-KEEP")).toBe("k");

    // Deleted from the folder: soft-deleted in the vault; back in the folder: recovered and rewritten.
    await deleteSecret(t, "DB_URL");
    await syncPass(world.app.deps);
    expect(world.azure.secrets.get("DB-URL")?.deletedAt).toBeDefined();
    expectOk(
      await t.admin.secretsV3.create({
        params: { secretName: "DB_URL" },
        body: { workspaceId: t.projectId, environment: "dev", secretPath: "/app", secretValue: "db-2" },
      }),
    );
    await syncPass(world.app.deps);
    expect(world.azure.secrets.get("DB-URL")?.deletedAt).toBeUndefined();
    expect(world.azure.latest("DB-URL")).toBe("db-2");
    expect(world.azure.latest("AKV-FOREIGN")).toBe("theirs");

    // Importing takes the vault's secrets into the folder (missing keys only) and makes them the sync's.
    world.azure.seed("FROM-VAULT", "v");
    const imported = expectOk(
      await t.admin.secretSyncs.azureKeyVault.importSecrets({
        params: { syncId: sync.id },
        query: { importBehavior: "prioritize-source" },
      }),
    ).secretSync;
    expect(imported.importStatus).toBe("succeeded");
    const read = expectOk(
      await t.admin.secretsV3.get({
        params: { secretName: "FROM_VAULT" },
        query: { workspaceId: t.projectId, environment: "dev", secretPath: "/app" },
      }),
    );
    expect(read.secret.secretValue).toBe("v");
    const folder = expectOk(
      await t.admin.secretsV3.get({
        params: { secretName: "DB_URL" },
        query: { workspaceId: t.projectId, environment: "dev", secretPath: "/app" },
      }),
    );
    expect(folder.secret.secretValue).toBe("db-2");
    const types = (await auditEvents(t)).map((e) => e.event.type);
    expect(types).toContain("secret-sync-import-secrets");
  });

  it("reports a refused token as a failed sync, and recovers", async () => {
    const world = current();
    const t = await createSyncTenant(world, { AKV_FAIL: "1" });
    const sync = expectOk(
      await t.admin.secretSyncs.azureKeyVault.create({
        body: { ...source(t, t.azureConnectionId), destinationConfig: { vaultBaseUrl: world.azure.url } },
      }),
    ).secretSync;
    world.azure.setMode("unauthorized");
    try {
      await syncPass(world.app.deps);
    } finally {
      world.azure.setMode("ok");
    }
    const failed = expectOk(await t.admin.secretSyncs.azureKeyVault.get({ params: { syncId: sync.id } })).secretSync;
    expect(failed.syncStatus).toBe("failed");
    expect(failed.lastSyncMessage).toMatch(/HTTP 401/);
    expect(failed.lastSyncMessage).not.toContain(AZURE.clientSecret);
    await later(world.app, 60_000, () => syncPass(world.app.deps));
    expect(world.azure.latest("AKV-FAIL")).toBe("1");
  });
});
