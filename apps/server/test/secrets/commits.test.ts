import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/tenant";
import { createSecretsScope, expectOk, identityWithRules, putSecret, type SecretsScope, valuesAt } from "./helpers";
import { createFolder } from "../helpers/structure";

const RAW = "/api/v3/secrets/raw";
const MISSING = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";

type SecretOnly<T> = Extract<T, { type: "secret" }>;
/** The secrets among a state's or a preview's entries. */
const secretsIn = <T extends { type: string }>(items: readonly T[]) =>
  items.filter((item): item is SecretOnly<T> => item.type === "secret");
/** A commit's change, which must be a secret's. */
const secretChange = <T extends { resourceType: string }>(change: T) => {
  expect(change.resourceType).toBe("secret");
  return change as Extract<T, { resourceType: "secret" }>;
};

const place = (scope: SecretsScope, path = "/") => ({ projectId: scope.projectId, environment: "dev", path });

const commitsOf = async (scope: SecretsScope, path = "/") =>
  expectOk(await scope.tenant.admin.pit.list({ query: place(scope, path) })).commits;

const valuesOf = valuesAt;

/** A then B created, A changed, B deleted: five commits on the root with the environment's own. */
const history = async (scope: SecretsScope) => {
  const a = await putSecret(scope.http, scope.projectId, "A", "a1");
  const b = await putSecret(scope.http, scope.projectId, "B", "b1");
  const base = { workspaceId: scope.projectId, environment: "dev" };
  expect((await scope.http.patch(`${RAW}/A`, { ...base, secretValue: "a2" })).status).toBe(200);
  expect((await scope.http.delete(`${RAW}/B`, base)).status).toBe(200);
  const [deleteB, updateA, createB, createA] = await commitsOf(scope);
  return { a, b, deleteB: deleteB!, updateA: updateA!, createB: createB!, createA: createA! };
};

describe("folder commits", () => {
  it("records one commit per write in order, with what each changed", async () => {
    const scope = await createSecretsScope();
    const { a, b, deleteB, updateA, createB, createA } = await history(scope);
    const all = await commitsOf(scope);
    expect(all.map((c) => c.message)).toEqual([
      "Secret Deleted",
      "Secret Updated",
      "Secret Created",
      "Secret Created",
      "Folder created",
    ]);
    expect(all.map((c) => Number(c.commitId))).toEqual([...all.map((c) => Number(c.commitId))].sort((x, y) => y - x));
    expect(all[0]).toMatchObject({ isLatest: true, actorType: "identity", changesCount: 1 });
    expect(all[0]!.actorMetadata.id).toBe(scope.tenant.adminIdentityId);
    const asc = expectOk(await scope.tenant.admin.pit.list({ query: { ...place(scope), sort: "asc", limit: 2 } }));
    expect(asc).toMatchObject({ total: 5, hasMore: true });
    expect(asc.commits.map((c) => c.message)).toEqual(["Folder created", "Secret Created"]);
    const count = expectOk(await scope.tenant.admin.pit.count({ query: place(scope) }));
    expect(count).toEqual({ count: 5, folderId: createA.folderId });
    const found = expectOk(await scope.tenant.admin.pit.list({ query: { ...place(scope), search: "b" } }));
    expect(found.commits.map((c) => c.id)).toEqual([deleteB.id, createB.id]);

    const update = expectOk(
      await scope.tenant.admin.pit.changes({ params: { commitId: updateA.id }, query: { projectId: scope.projectId } }),
    ).changes;
    expect(update.changes).toHaveLength(1);
    expect(update.changes[0]).toMatchObject({ secretId: a.id, secretKey: "A", changeType: "add", isUpdate: true });
    expect(secretChange(update.changes[0]!).versions.map((v) => v.secretValue)).toEqual(["a2", "a1"]);
    const deletion = expectOk(
      await scope.tenant.admin.pit.changes({ params: { commitId: deleteB.id }, query: { projectId: scope.projectId } }),
    ).changes;
    expect(deletion.changes[0]).toMatchObject({ secretId: b.id, changeType: "delete", isUpdate: false });
    const state = expectOk(
      await scope.tenant.admin.pit.state({
        params: { commitId: createB.id },
        query: { projectId: scope.projectId, folderId: createB.folderId },
      }),
    );
    expect(secretsIn(state).map((s) => [s.secretKey, s.secretVersion])).toEqual([
      ["A", 1],
      ["B", 1],
    ]);
  });

  it("makes one commit of a batch, and accepts workspaceId and envId", async () => {
    const scope = await createSecretsScope();
    const batch = await scope.http.post("/api/v3/secrets/batch/raw", {
      workspaceId: scope.projectId,
      environment: "dev",
      secrets: ["X", "Y", "Z"].map((secretKey) => ({ secretKey, secretValue: secretKey.toLowerCase() })),
    });
    expect(batch.status).toBe(200);
    const envId = scope.project.environments.find((e) => e.slug === "dev")!.id;
    const listed = expectOk(
      await scope.tenant.admin.pit.list({ query: { workspaceId: scope.projectId, envId, path: "/" } }),
    );
    expect(listed.commits[0]).toMatchObject({ changesCount: 3, message: "Secrets 3 created", envId });
  });

  it("previews and rolls back: deleted keys return under their id, added ones go, history is kept", async () => {
    const scope = await createSecretsScope();
    const { a, b, createB } = await history(scope);
    await putSecret(scope.http, scope.projectId, "C", "c1");
    const query = { projectId: scope.projectId, environment: "dev", folderId: createB.folderId };
    const [diff] = expectOk(await scope.tenant.admin.pit.compare({ params: { commitId: createB.id }, query }));
    expect(
      secretsIn(diff!.changes)
        .map((c) => [c.secretKey, c.changeType])
        .sort(),
    ).toEqual([
      ["A", "update"],
      ["B", "create"],
      ["C", "delete"],
    ]);
    expect(
      secretsIn(diff!.changes)
        .find((c) => c.secretKey === "A")!
        .versions.map((v) => v.secretValue),
    ).toEqual(["a1", "a2"]);
    expect(await valuesOf(scope)).toEqual({ A: "a2", C: "c1" });

    const latest = (await commitsOf(scope))[0]!;
    const done = expectOk(
      await scope.tenant.admin.pit.rollback({
        params: { commitId: createB.id },
        body: { ...query, deepRollback: false, message: "back to B", latestCommitId: latest.id },
      }),
    );
    expect(done).toMatchObject({ success: true, secretChangesCount: 3, totalChanges: 3 });
    expect(await valuesOf(scope)).toEqual({ A: "a1", B: "b1" });
    const restored = await scope.http.get(`${RAW}/B`, { workspaceId: scope.projectId, environment: "dev" });
    expect(restored.body.secret).toMatchObject({ id: b.id, version: 3 });
    const versions = expectOk(
      await scope.tenant.admin.secretVersions.list({ params: { secretId: a.id }, query: { offset: 0, limit: 20 } }),
    );
    expect(versions.secretVersions.map((v) => [v.version, v.secretValue])).toEqual([
      [3, "a1"],
      [2, "a2"],
      [1, "a1"],
    ]);
    const [top] = await commitsOf(scope);
    expect(top).toMatchObject({ message: "back to B", changesCount: 3, isLatest: true });
    expect("commitIds" in done && done.commitIds).toEqual([top!.id]);

    const again = await scope.tenant.admin.pit.rollback({
      params: { commitId: createB.id },
      body: { ...query, deepRollback: false, latestCommitId: latest.id },
    });
    expect(again).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("changed since the preview") },
    });
  });

  it("reverts one commit and refuses the first", async () => {
    const scope = await createSecretsScope();
    const { updateA } = await history(scope);
    const all = await commitsOf(scope);
    const reverted = expectOk(
      await scope.tenant.admin.pit.revert({
        params: { commitId: updateA.id },
        query: {},
        body: { projectId: scope.projectId },
      }),
    );
    expect(reverted).toMatchObject({ success: true, originalCommitId: updateA.id, changesReverted: 1 });
    expect(await valuesOf(scope)).toEqual({ A: "a1" });
    expect("revertCommitId" in reverted && reverted.revertCommitId).toBe((await commitsOf(scope))[0]!.id);
    const first = all[all.length - 1]!;
    const refused = await scope.tenant.admin.pit.revert({
      params: { commitId: first.id },
      query: { workspaceId: scope.projectId },
      body: {},
    });
    expect(refused).toMatchObject({ status: 400, body: { message: "Cannot revert the first commit" } });
  });

  it("rolls a subtree back deeply", async () => {
    const scope = await createSecretsScope();
    await createFolder(scope.tenant, scope.projectId, "dev", "/", "app");
    await createFolder(scope.tenant, scope.projectId, "dev", "/app", "db");
    const base = { workspaceId: scope.projectId, environment: "dev" };
    await putSecret(scope.http, scope.projectId, "LOW", "l1", { secretPath: "/app/db" });
    await putSecret(scope.http, scope.projectId, "TOP", "t1", { secretPath: "/app" });
    const [target] = await commitsOf(scope, "/app");
    expect((await scope.http.patch(`${RAW}/TOP`, { ...base, secretPath: "/app", secretValue: "t2" })).status).toBe(200);
    expect((await scope.http.patch(`${RAW}/LOW`, { ...base, secretPath: "/app/db", secretValue: "l2" })).status).toBe(
      200,
    );
    await putSecret(scope.http, scope.projectId, "NEW", "n", { secretPath: "/app/db" });
    const query = { projectId: scope.projectId, environment: "dev", folderId: target!.folderId };
    const diffs = expectOk(
      await scope.tenant.admin.pit.compare({
        params: { commitId: target!.id },
        query: { ...query, deepRollback: "true" },
      }),
    );
    expect(diffs.map((d) => [d.folderPath, d.changes.length])).toEqual([
      ["/app", 1],
      ["/app/db", 2],
    ]);
    const done = expectOk(
      await scope.tenant.admin.pit.rollback({
        params: { commitId: target!.id },
        body: { ...query, deepRollback: true },
      }),
    );
    expect(done).toMatchObject({ success: true, totalChanges: 3 });
    expect(await valuesOf(scope, "/app")).toEqual({ TOP: "t1" });
    expect(await valuesOf(scope, "/app/db")).toEqual({ LOW: "l1" });
    expect((await commitsOf(scope, "/app/db"))[0]!.message).toBe("Deep rollback");
  });
});

describe("folder commit rights", () => {
  it("masks values without read-value, refuses rollback with commits read only, and needs commits read", async () => {
    const scope = await createSecretsScope();
    const { createB, updateA } = await history(scope);
    const reader = await identityWithRules(scope, [
      { subject: "commits", action: ["read"], inverted: false },
      { subject: "secrets", action: ["describeSecret", "edit", "create", "delete"], inverted: false },
    ]);
    const changes = expectOk(
      await reader.client.pit.changes({ params: { commitId: updateA.id }, query: { projectId: scope.projectId } }),
    ).changes;
    expect(secretChange(changes.changes[0]!).versions.every((v) => v.secretValueHidden && v.secretValue !== "a1")).toBe(
      true,
    );
    const body = { projectId: scope.projectId, environment: "dev", folderId: createB.folderId, deepRollback: false };
    const refused = await reader.client.pit.rollback({ params: { commitId: createB.id }, body });
    expect(refused).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to perform-rollback on commits" },
    });
    const outsider = await identityWithRules(scope, [{ subject: "secrets", action: ["read"], inverted: false }]);
    expect((await outsider.client.pit.list({ query: place(scope) })).status).toBe(403);
    const narrow = await identityWithRules(scope, [
      { subject: "commits", action: ["read", "perform-rollback"], inverted: false },
      { subject: "secrets", action: ["describeSecret", "readValue", "edit"], inverted: false },
    ]);
    const noCreate = await narrow.client.pit.rollback({ params: { commitId: createB.id }, body });
    expect(noCreate).toMatchObject({ status: 403, body: { message: "You are not allowed to create on secrets" } });
    expect(await valuesOf(scope)).toEqual({ A: "a2" });
  });

  it("answers 404 for another organization's project, commit and folder", async () => {
    const scope = await createSecretsScope();
    const { createB } = await history(scope);
    const other = await createTenant();
    expect((await other.admin.pit.list({ query: place(scope) })).status).toBe(404);
    const changes = await other.admin.pit.changes({
      params: { commitId: createB.id },
      query: { projectId: scope.projectId },
    });
    expect(changes.status).toBe(404);
    const own = await createSecretsScope();
    const viaOwn = await own.tenant.admin.pit.changes({
      params: { commitId: createB.id },
      query: { projectId: own.projectId },
    });
    expect(viaOwn).toMatchObject({ status: 404, body: { message: `Commit with ID ${createB.id} not found` } });
    const foreignFolder = await own.tenant.admin.pit.rollback({
      params: { commitId: createB.id },
      body: { projectId: own.projectId, environment: "dev", folderId: createB.folderId, deepRollback: false },
    });
    expect(foreignFolder.status).toBe(404);
    const unknown = await scope.tenant.admin.pit.rollback({
      params: { commitId: MISSING },
      body: { projectId: scope.projectId, environment: "dev", folderId: createB.folderId, deepRollback: false },
    });
    expect(unknown).toMatchObject({ status: 404, body: { message: "Target commit not found" } });
    const noPath = await scope.tenant.admin.pit.count({ query: place(scope, "/nowhere") });
    expect(noPath.status).toBe(404);
  });
});
