import { describe, expect, it } from "vitest";
import { auditEvents } from "../audit/helpers";
import { createTenant } from "../helpers/tenant";
import { merge, protect, review, setup, valueOf } from "../secret-approvals/helpers";
import {
  createFolder,
  createSecretsScope,
  expectOk,
  identityWithRules,
  putSecret,
  type SecretsScope,
  valuesAt,
} from "./helpers";

type Changes = Parameters<SecretsScope["tenant"]["admin"]["pit"]["batchCommit"]>[0]["body"]["changes"];

const body = (projectId: string, changes: Changes, secretPath = "/") => ({
  projectId,
  environment: "dev",
  secretPath,
  message: "Tidy up",
  changes,
});

const namesAt = async (scope: SecretsScope, path = "/") => {
  const folders = expectOk(
    await scope.tenant.admin.folders.list({ query: { workspaceId: scope.projectId, environment: "dev", path } }),
  ).folders;
  return { secrets: await valuesAt(scope, path), folders: folders.map((f) => f.name).sort() };
};

describe("POST /api/v1/pit/batch/commit", () => {
  it("writes secret and subfolder changes as one named commit", async () => {
    const scope = await createSecretsScope();
    await putSecret(scope.http, scope.projectId, "OLD", "o");
    await putSecret(scope.http, scope.projectId, "KEEP", "k1");
    const old = await createFolder(scope.tenant, scope.projectId, "dev", "/", "old");
    const renamed = await createFolder(scope.tenant, scope.projectId, "dev", "/", "draft");
    const before = expectOk(
      await scope.tenant.admin.pit.count({ query: { projectId: scope.projectId, environment: "dev", path: "/" } }),
    ).count;
    const res = await scope.tenant.admin.pit.batchCommit({
      body: body(scope.projectId, {
        secrets: {
          create: [{ secretKey: "NEW", secretValue: "n" }],
          update: [{ secretKey: "KEEP", secretValue: "k2" }],
          delete: [{ secretKey: "OLD" }],
        },
        folders: {
          create: [{ folderName: "fresh", description: "made by a commit" }],
          update: [{ id: renamed.id, folderName: "final" }],
          delete: [{ id: old.id, folderName: "old" }],
        },
      }),
    });
    const done = expectOk(res);
    expect(done.message).toBe("success");
    expect(await namesAt(scope)).toEqual({ secrets: { KEEP: "k2", NEW: "n" }, folders: ["final", "fresh"] });
    const { commits } = expectOk(
      await scope.tenant.admin.pit.list({ query: { projectId: scope.projectId, environment: "dev", path: "/" } }),
    );
    expect(commits).toHaveLength(before + 1);
    expect(commits[0]).toMatchObject({ message: "Tidy up", changesCount: 6, isLatest: true });
    expect("commitId" in done && done.commitId).toBe(commits[0]!.id);
  });

  it("refuses an empty commit, an unknown subfolder and a taken name, writing nothing", async () => {
    const scope = await createSecretsScope();
    await createFolder(scope.tenant, scope.projectId, "dev", "/", "taken");
    const empty = await scope.tenant.admin.pit.batchCommit({ body: body(scope.projectId, {}) });
    expect(empty).toMatchObject({ status: 400, body: { message: "A commit needs at least one change" } });
    const missing = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";
    const unknown = await scope.tenant.admin.pit.batchCommit({
      body: body(scope.projectId, {
        secrets: { create: [{ secretKey: "LOST", secretValue: "l" }] },
        folders: { delete: [{ id: missing, folderName: "nothing" }] },
      }),
    });
    expect(unknown).toMatchObject({ status: 404, body: { message: `Folder with ID '${missing}' not found` } });
    const taken = await scope.tenant.admin.pit.batchCommit({
      body: body(scope.projectId, {
        secrets: { create: [{ secretKey: "LOST", secretValue: "l" }] },
        folders: { create: [{ folderName: "taken" }] },
      }),
    });
    expect(taken).toMatchObject({ status: 400, body: { message: "Folder with specified name already exists" } });
    const takenFolder = expectOk(
      await scope.tenant.admin.folders.list({ query: { workspaceId: scope.projectId, environment: "dev", path: "/" } }),
    ).folders[0]!;
    const misnamed = await scope.tenant.admin.pit.batchCommit({
      body: body(scope.projectId, { folders: { delete: [{ id: takenFolder.id, folderName: "other" }] } }),
    });
    expect(misnamed).toMatchObject({
      status: 400,
      body: { message: `Folder with ID '${takenFolder.id}' is named 'taken', not 'other'` },
    });
    const nowhere = await scope.tenant.admin.pit.batchCommit({
      body: body(scope.projectId, { secrets: { create: [{ secretKey: "LOST", secretValue: "l" }] } }, "/absent"),
    });
    expect(nowhere.status).toBe(404);
    const invalid = await scope.tenant.admin.pit.batchCommit({
      body: body(scope.projectId, { folders: { create: [{ folderName: "not a name" }] } }),
    });
    expect(invalid.status).toBe(422);
    expect(await namesAt(scope)).toEqual({ secrets: {}, folders: ["taken"] });
  });

  it("asks each step's right, and another organization's project is not found", async () => {
    const scope = await createSecretsScope();
    const secretsOnly = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret", "readValue", "create", "edit", "delete"], inverted: false },
    ]);
    const withFolder = body(scope.projectId, {
      secrets: { create: [{ secretKey: "A", secretValue: "a" }] },
      folders: { create: [{ folderName: "sub" }] },
    });
    const refused = await secretsOnly.client.pit.batchCommit({ body: withFolder });
    expect(refused).toMatchObject({ status: 403, body: { message: expect.stringContaining("secret-folders") } });
    const foldersOnly = await identityWithRules(scope, [
      { subject: "secret-folders", action: ["create"], inverted: false },
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    expect((await foldersOnly.client.pit.batchCommit({ body: withFolder })).status).toBe(403);
    const other = await createTenant();
    expect((await other.admin.pit.batchCommit({ body: withFolder })).status).toBe(404);
    expect(await namesAt(scope)).toEqual({ secrets: {}, folders: [] });
    expectOk(
      await secretsOnly.client.pit.batchCommit({
        body: { ...withFolder, changes: { secrets: withFolder.changes.secrets } },
      }),
    );
    expect(await namesAt(scope)).toEqual({ secrets: { A: "a" }, folders: [] });
  });

  it("in a protected folder writes the subfolders and opens a change request for the secrets", async () => {
    const s = await setup();
    await protect(s, { approvals: 1 });
    const res = await s.committer.client.pit.batchCommit({
      body: body(s.projectId, {
        secrets: { create: [{ secretKey: "HELD", secretValue: "h" }] },
        folders: { create: [{ folderName: "now" }] },
      }),
    });
    expect(res.status).toBe(200);
    const approval = (res.body as { approval?: { id: string } }).approval;
    expect(res.headers.get("x-keyward-change-request")).toBe(approval!.id);
    const folders = expectOk(
      await s.tenant.admin.folders.list({ query: { workspaceId: s.projectId, environment: "dev", path: "/" } }),
    ).folders;
    expect(folders.map((f) => f.name)).toEqual(["now"]);
    expect(await valueOf(s, "HELD")).toBe(404);
    // Two changes, two events: the request opened, then the subfolders written with the request named.
    const events = await auditEvents(s.tenant, { projectId: s.projectId });
    const opened = events.find((e) => e.event.type === "secret-approval-request");
    const written = events.find((e) => e.event.type === "pit-process-new-commit-raw");
    expect(opened?.event.metadata).toMatchObject({ secretApprovalRequestId: approval!.id });
    expect(written?.event.metadata).toMatchObject({ approvalId: approval!.id, folderNames: ["now"] });
    expectOk(await review(s.approverA, approval!.id, "approved"));
    expectOk(await merge(s.committer, approval!.id));
    expect(await valueOf(s, "HELD")).toBe("h");
  });
});
