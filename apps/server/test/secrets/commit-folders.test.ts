import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { sealedSecretRowsAfter } from "../../src/modules/backup/backup.repository";
import { createTenant } from "../helpers/tenant";
import {
  createFolder,
  createSecretsScope,
  expectOk,
  identityWithRules,
  putSecret,
  type SecretsScope,
  valuesAt,
} from "./helpers";

const RAW = "/api/v3/secrets/raw";

const place = (scope: SecretsScope, path = "/") => ({ projectId: scope.projectId, environment: "dev", path });

const commitsOf = async (scope: SecretsScope, path = "/") =>
  expectOk(await scope.tenant.admin.pit.list({ query: place(scope, path) })).commits;

const valuesOf = valuesAt;

const idsOf = async (scope: SecretsScope, path: string) => {
  const res = await scope.http.get(RAW, { workspaceId: scope.projectId, environment: "dev", secretPath: path });
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body.secrets as { secretKey: string; id: string }[]).map((s) => [s.secretKey, s.id]));
};

const subfolders = async (scope: SecretsScope, path = "/") =>
  expectOk(await scope.tenant.admin.folders.list({ query: { workspaceId: scope.projectId, environment: "dev", path } }))
    .folders.map((f) => [f.name, f.id])
    .sort();

const removeFolder = async (scope: SecretsScope, name: string, path = "/") =>
  expectOk(
    await scope.tenant.admin.folders.delete({
      params: { folderIdOrName: name },
      body: { workspaceId: scope.projectId, environment: "dev", path },
    }),
  );

const rollback = (scope: SecretsScope, commit: { id: string; folderId: string }, deepRollback = false) =>
  scope.tenant.admin.pit.rollback({
    params: { commitId: commit.id },
    body: { projectId: scope.projectId, environment: "dev", folderId: commit.folderId, deepRollback },
  });

/** /app with X and Y, /app/sub with Z; the root's newest commit then. */
const tree = async (scope: SecretsScope) => {
  await createFolder(scope.tenant, scope.projectId, "dev", "/", "app");
  await createFolder(scope.tenant, scope.projectId, "dev", "/app", "sub");
  await putSecret(scope.http, scope.projectId, "X", "x1", { secretPath: "/app" });
  await putSecret(scope.http, scope.projectId, "Y", "y1", { secretPath: "/app" });
  await putSecret(scope.http, scope.projectId, "Z", "z1", { secretPath: "/app/sub" });
  const [target] = await commitsOf(scope);
  return { target: target!, folders: await subfolders(scope), ids: await idsOf(scope, "/app") };
};

describe("folder changes in commits", () => {
  it("records a subfolder's creation, rename and deletion in its parent's commits", async () => {
    const scope = await createSecretsScope();
    const app = await createFolder(scope.tenant, scope.projectId, "dev", "/", "app");
    const patched = await scope.tenant.admin.folders.update({
      params: { folderId: app.id },
      body: { workspaceId: scope.projectId, environment: "dev", path: "/", name: "service" },
    });
    expect(patched.status).toBe(200);
    await removeFolder(scope, "service");
    const [deleted, renamed, created] = await commitsOf(scope);
    expect([deleted, renamed, created].map((c) => [c!.message, c!.changesCount, c!.actorType])).toEqual([
      ["Folder Deleted", 1, "identity"],
      ["Folder Renamed", 1, "identity"],
      ["Folder Created", 1, "identity"],
    ]);
    expect(created!.actorMetadata.id).toBe(scope.tenant.adminIdentityId);
    const changesOf = async (commitId: string) =>
      expectOk(await scope.tenant.admin.pit.changes({ params: { commitId }, query: { projectId: scope.projectId } }))
        .changes.changes;
    expect(await changesOf(renamed!.id)).toMatchObject([
      {
        resourceType: "folder",
        folderChangeId: app.id,
        folderName: "service",
        folderVersion: "2",
        changeType: "add",
        isUpdate: true,
        versions: [
          { version: "2", name: "service" },
          { version: "1", name: "app" },
        ],
      },
    ]);
    expect(await changesOf(deleted!.id)).toMatchObject([
      { resourceType: "folder", folderChangeId: app.id, changeType: "delete", isUpdate: false },
    ]);
    const state = expectOk(
      await scope.tenant.admin.pit.state({
        params: { commitId: renamed!.id },
        query: { projectId: scope.projectId, folderId: renamed!.folderId },
      }),
    );
    expect(state).toEqual([
      { type: "folder", id: app.id, versionId: expect.any(String), folderName: "service", folderVersion: 2 },
    ]);
    const snapshot = expectOk(
      await scope.tenant.admin.secretSnapshots.get({ params: { secretSnapshotId: renamed!.id } }),
    ).secretSnapshot;
    expect(snapshot.folderVersion).toEqual([{ id: app.id, name: "service" }]);
    const found = expectOk(await scope.tenant.admin.pit.list({ query: { ...place(scope), search: "servi" } }));
    expect(found.commits.map((c) => c.id).sort()).toEqual([deleted!.id, renamed!.id].sort());
  });

  it("brings a deleted folder back under its id with its secrets and subfolders, history kept", async () => {
    const scope = await createSecretsScope();
    const { target, folders, ids } = await tree(scope);
    await removeFolder(scope, "app");
    expect(await subfolders(scope)).toEqual([]);
    // The history is kept for a rollback, not for reads of a secret that is gone with its folder.
    const gone = await scope.tenant.admin.secretVersions.list({
      params: { secretId: ids.X! },
      query: { offset: 0, limit: 20 },
    });
    expect(gone).toMatchObject({ status: 404, body: { message: `Secret with ID '${ids.X}' not found` } });

    const query = { projectId: scope.projectId, environment: "dev", folderId: target.folderId };
    const diffs = expectOk(await scope.tenant.admin.pit.compare({ params: { commitId: target.id }, query }));
    expect(
      diffs.map((d) => [
        d.folderPath,
        d.changes.map((c) => `${c.changeType} ${c.type === "folder" ? `${c.folderName}/` : c.secretKey}`),
      ]),
    ).toEqual([
      ["/", ["create app/"]],
      ["/app", ["create X", "create Y", "create sub/"]],
      ["/app/sub", ["create Z"]],
    ]);

    const done = expectOk(await rollback(scope, target));
    expect(done).toMatchObject({ success: true, secretChangesCount: 3, folderChangesCount: 2, totalChanges: 5 });
    expect(await subfolders(scope)).toEqual(folders);
    expect(await valuesOf(scope, "/app")).toEqual({ X: "x1", Y: "y1" });
    expect(await valuesOf(scope, "/app/sub")).toEqual({ Z: "z1" });
    expect(await idsOf(scope, "/app")).toEqual(ids);
    const versions = expectOk(
      await scope.tenant.admin.secretVersions.list({ params: { secretId: ids.X! }, query: { offset: 0, limit: 20 } }),
    );
    expect(versions.secretVersions.map((v) => [v.version, v.secretValue])).toEqual([
      [2, "x1"],
      [1, "x1"],
    ]);
    // The folder's own timeline goes on: its commits before the deletion, then the one that brought it back.
    const appCommits = await commitsOf(scope, "/app");
    expect(appCommits[0]).toMatchObject({ message: "Rollback to previous commit", isLatest: true });
    expect(appCommits.length).toBeGreaterThan(3);
    const [top] = await commitsOf(scope);
    expect(top).toMatchObject({ message: "Rollback to previous commit", changesCount: 1 });
  });

  it("deep, takes a deleted folder back to the commit's moment: what it held later stays gone, and returns", async () => {
    const scope = await createSecretsScope();
    await createFolder(scope.tenant, scope.projectId, "dev", "/", "app");
    await putSecret(scope.http, scope.projectId, "EARLY", "e", { secretPath: "/app" });
    await createFolder(scope.tenant, scope.projectId, "dev", "/", "marker");
    const [moment] = await commitsOf(scope);
    await putSecret(scope.http, scope.projectId, "LATE", "l", { secretPath: "/app" });
    await createFolder(scope.tenant, scope.projectId, "dev", "/app", "later");
    const [late] = await commitsOf(scope, "/app");
    await removeFolder(scope, "app");

    // Not deep: /app comes back as it was when it went.
    const shallow = expectOk(
      await scope.tenant.admin.pit.compare({
        params: { commitId: moment!.id },
        query: { projectId: scope.projectId, environment: "dev", folderId: moment!.folderId },
      }),
    );
    expect(shallow.map((d) => [d.folderPath, d.changes.length])).toEqual([
      ["/", 1],
      ["/app", 3],
      ["/app/later", 0],
    ]);
    expectOk(await rollback(scope, moment!, true));
    expect(await valuesOf(scope, "/app")).toEqual({ EARLY: "e" });
    expect(await subfolders(scope, "/app")).toEqual([]);
    // The folder's own history says LATE and /app/later left; rolling it to `late` brings them back.
    const compare = expectOk(
      await scope.tenant.admin.pit.compare({
        params: { commitId: late!.id },
        query: { projectId: scope.projectId, environment: "dev", folderId: late!.folderId },
      }),
    );
    expect(compare[0]!.changes.map((c) => [c.type, c.changeType])).toEqual([
      ["secret", "create"],
      ["folder", "create"],
    ]);
    expectOk(await rollback(scope, late!));
    expect(await valuesOf(scope, "/app")).toEqual({ EARLY: "e", LATE: "l" });
    expect((await subfolders(scope, "/app")).map(([name]) => name)).toEqual(["later"]);
  });

  it("removes folders added since and renames folders back, and reverts a folder's deletion", async () => {
    const scope = await createSecretsScope();
    const app = await createFolder(scope.tenant, scope.projectId, "dev", "/", "app");
    await putSecret(scope.http, scope.projectId, "KEEP", "k", { secretPath: "/app" });
    const [target] = await commitsOf(scope);
    await createFolder(scope.tenant, scope.projectId, "dev", "/", "extra");
    expectOk(
      await scope.tenant.admin.folders.update({
        params: { folderId: app.id },
        body: { workspaceId: scope.projectId, environment: "dev", path: "/", name: "renamed" },
      }),
    );
    const done = expectOk(await rollback(scope, target!));
    expect(done).toMatchObject({ secretChangesCount: 0, folderChangesCount: 2 });
    expect(await subfolders(scope)).toEqual([["app", app.id]]);
    expect(await valuesOf(scope, "/app")).toEqual({ KEEP: "k" });

    await removeFolder(scope, "app");
    const [deletion] = await commitsOf(scope);
    const reverted = expectOk(
      await scope.tenant.admin.pit.revert({
        params: { commitId: deletion!.id },
        query: {},
        body: { projectId: scope.projectId },
      }),
    );
    expect(reverted).toMatchObject({ success: true, changesReverted: 2 });
    expect(await valuesOf(scope, "/app")).toEqual({ KEEP: "k" });
  });

  it("asks for the folder rights each step needs", async () => {
    const scope = await createSecretsScope();
    const { target } = await tree(scope);
    await removeFolder(scope, "app");
    const secretsOnly = await identityWithRules(scope, [
      { subject: "commits", action: ["read", "perform-rollback"], inverted: false },
      { subject: "secrets", action: ["describeSecret", "readValue", "create", "edit", "delete"], inverted: false },
    ]);
    const body = { projectId: scope.projectId, environment: "dev", folderId: target.folderId, deepRollback: false };
    const refused = await secretsOnly.client.pit.rollback({ params: { commitId: target.id }, body });
    expect(refused).toMatchObject({
      status: 403,
      body: { message: expect.stringContaining("secret-folders") },
    });
    const noSecrets = await identityWithRules(scope, [
      { subject: "commits", action: ["read", "perform-rollback"], inverted: false },
      { subject: "secret-folders", action: ["create", "edit", "delete"], inverted: false },
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    expect((await noSecrets.client.pit.rollback({ params: { commitId: target.id }, body })).status).toBe(403);
    expect(await subfolders(scope)).toEqual([]);

    const rootOnly = await identityWithRules(scope, [
      { subject: "commits", action: ["read", "perform-rollback"], inverted: false, conditions: { secretPath: "/" } },
      { subject: "secret-folders", action: ["create", "edit", "delete"], inverted: false },
      { subject: "secrets", action: ["describeSecret", "readValue", "create", "edit", "delete"], inverted: false },
    ]);
    const outside = await rootOnly.client.pit.rollback({ params: { commitId: target.id }, body });
    expect(outside).toMatchObject({ status: 403, body: { message: expect.stringContaining("commits") } });
    expect(await subfolders(scope)).toEqual([]);

    const other = await createTenant();
    const elsewhere = await other.admin.pit.rollback({ params: { commitId: target.id }, body });
    expect(elsewhere.status).toBe(404);
  });

  it("keeps a deleted folder's history until its environment goes", async () => {
    const scope = await createSecretsScope();
    const app = await createFolder(scope.tenant, scope.projectId, "dev", "/", "app");
    await putSecret(scope.http, scope.projectId, "GONE", "g", { secretPath: "/app" });
    await removeFolder(scope, "app");
    const db = scope.tenant.app.deps.db;
    const { rows } = await sql<{ id: string }>`select id from secret_versions where folder_id = ${app.id}`.execute(db);
    const gone = rows[0]!.id;
    const count = async () =>
      (
        await sql<{ versions: number; commits: number; folders: number }>`
          select (select count(*)::int from secret_versions where folder_id = ${app.id}) as versions,
            (select count(*)::int from folder_commits where folder_id = ${app.id}) as commits,
            (select count(*)::int from secret_folder_versions where folder_id = ${app.id}) as folders`.execute(db)
      ).rows[0]!;
    expect(await count()).toEqual({ versions: 1, commits: 2, folders: 2 });
    // A restore's check still opens them under their project's key.
    const sealed: { project_id: string }[] = [];
    for (let after: string | undefined; ;) {
      const page = await sealedSecretRowsAfter(db, "secret_versions", after, 500);
      sealed.push(...page.filter((row) => row.id === gone));
      if (page.length < 500) break;
      after = page[page.length - 1]!.id;
    }
    expect(sealed.map((row) => row.project_id)).toEqual([scope.projectId]);
    const dev = scope.project.environments.find((e) => e.slug === "dev")!;
    expectOk(
      await scope.tenant.admin.projects.deleteEnvironment({
        params: { projectId: scope.projectId, environmentId: dev.id },
      }),
    );
    expect(await count()).toEqual({ versions: 0, commits: 0, folders: 0 });
  });
});
