import { describe, expect, it } from "vitest";
import { createIdentity, createProject, expectOk } from "../helpers/tenant";
import { createSyncTenant, syncSource, useSyncWorld, type SyncTenant } from "./helpers";

const current = useSyncWorld();

const repo = (name: string) => ({ scope: "repository" as const, owner: "acme", repo: name });

const gitHubSync = async (t: SyncTenant, repoName: string) =>
  expectOk(
    await t.admin.secretSyncs.github.create({
      body: { ...syncSource(t, t.githubConnectionId), isAutoSyncEnabled: false, destinationConfig: repo(repoName) },
    }),
  ).secretSync;

describe("POST /api/v1/secret-syncs/:destination/check-destination", () => {
  it("finds another sync of the organization at the same place, names only the caller's own project", async () => {
    const t = await createSyncTenant(current(), {});
    const sync = await gitHubSync(t, "checkout");
    const check = (body: Record<string, unknown>, projectId = t.projectId) =>
      t.admin.secretSyncs.github.checkDestination({
        body: { projectId, destinationConfig: repo("checkout"), ...body },
      });

    expect(expectOk(await check({ connectionId: t.githubConnectionId }))).toEqual({
      hasDuplicate: true,
      duplicateProjectId: t.projectId,
    });
    // Without a connection the settings alone decide.
    expect(expectOk(await check({}))).toEqual({ hasDuplicate: true, duplicateProjectId: t.projectId });
    // The sync being edited is not its own duplicate; another repository is another place.
    expect(expectOk(await check({ excludeSyncId: sync.id }))).toEqual({ hasDuplicate: false });
    expect(
      expectOk(
        await t.admin.secretSyncs.github.checkDestination({
          body: { projectId: t.projectId, destinationConfig: repo("storefront") },
        }),
      ),
    ).toEqual({ hasDuplicate: false });
    // Another destination kind with the same connection is not compared.
    expect(
      expectOk(
        await t.admin.secretSyncs.azureKeyVault.checkDestination({
          body: { projectId: t.projectId, destinationConfig: { vaultBaseUrl: current().azure.url } },
        }),
      ),
    ).toEqual({ hasDuplicate: false });

    // From another project of the organization: a duplicate is said to exist, its project is not named.
    const other = await createProject(t);
    expect(expectOk(await check({ connectionId: t.githubConnectionId }, other.id))).toEqual({ hasDuplicate: true });
  });

  it("answers 403 without read on syncs, 404 for another organization's project or connection, 400 for a connection of another app, 422 on bad settings", async () => {
    const t = await createSyncTenant(current(), {});
    await gitHubSync(t, "billing");
    const stranger = await createSyncTenant(current(), {});
    // Another organization's sync at the same place is not a duplicate here.
    expect(
      expectOk(
        await stranger.admin.secretSyncs.github.checkDestination({
          body: {
            projectId: stranger.projectId,
            destinationConfig: repo("billing"),
            connectionId: stranger.githubConnectionId,
          },
        }),
      ),
    ).toEqual({ hasDuplicate: false });
    const foreignProject = await stranger.admin.secretSyncs.github.checkDestination({
      body: { projectId: t.projectId, destinationConfig: repo("billing") },
    });
    expect(foreignProject.status).toBe(404);
    const foreignConnection = await stranger.admin.secretSyncs.github.checkDestination({
      body: { projectId: stranger.projectId, destinationConfig: repo("billing"), connectionId: t.githubConnectionId },
    });
    expect(foreignConnection.status).toBe(404);

    const outsider = await createIdentity(t, { projectId: t.projectId, projectRole: "no-access" });
    const refused = await outsider.client.secretSyncs.github.checkDestination({
      body: { projectId: t.projectId, destinationConfig: repo("billing") },
    });
    expect(refused.status).toBe(403);

    // A connection of the wrong kind for the destination.
    const wrongApp = await t.admin.secretSyncs.github.checkDestination({
      body: { projectId: t.projectId, destinationConfig: repo("billing"), connectionId: t.awsConnectionId },
    });
    expect(wrongApp.status).toBe(400);
    const invalid = await t.admin.secretSyncs.github.checkDestination({
      body: { projectId: t.projectId, destinationConfig: { scope: "repository", owner: "acme" } as never },
    });
    expect(invalid.status).toBe(422);
  });
});
