import { describe, expect, it } from "vitest";
import { createFolder } from "../helpers/structure";
import { expectOk } from "../helpers/tenant";
import { merge, protect, review, setup, valueOf, type Setup } from "../secret-approvals/helpers";

const commitsOf = async (s: Setup, path = "/") =>
  expectOk(await s.tenant.admin.pit.list({ query: { projectId: s.projectId, environment: "dev", path } })).commits;

const write = async (s: Setup, key: string, value: string, secretPath = "/") => {
  const res = await s.tenant.admin.secretsV4.create({
    params: { secretName: key },
    body: { projectId: s.projectId, environment: "dev", secretPath, secretValue: value },
  });
  expect(res.status).toBe(200);
};

describe("rollbacks in folders a change policy protects", () => {
  it("opens a change request instead of writing, and merging it rolls back", async () => {
    const s = await setup();
    await write(s, "KEPT", "k");
    const [target] = await commitsOf(s);
    await write(s, "LATER", "l");
    await protect(s, { approvals: 1 });
    const body = { projectId: s.projectId, environment: "dev", folderId: target!.folderId, deepRollback: false };
    const res = await s.committer.client.pit.rollback({ params: { commitId: target!.id }, body });
    expect(res.status).toBe(200);
    const approval = (res.body as { approval?: { id: string } }).approval;
    expect(approval).toBeDefined();
    expect(res.headers.get("x-keyward-change-request")).toBe(approval!.id);
    expect(await valueOf(s, "LATER")).toBe("l");
    expectOk(await review(s.approverA, approval!.id, "approved"));
    expectOk(await merge(s.committer, approval!.id));
    expect(await valueOf(s, "LATER")).toBe(404);
    expect(await valueOf(s, "KEPT")).toBe("k");
  });

  it("refuses a deep rollback that reaches a protected folder, writing nothing", async () => {
    const s = await setup();
    await createFolder(s.tenant, s.projectId, "dev", "/", "app");
    await createFolder(s.tenant, s.projectId, "dev", "/app", "locked");
    const [target] = await commitsOf(s, "/app");
    await write(s, "FREE", "f", "/app");
    await write(s, "HELD", "h", "/app/locked");
    await protect(s, { secretPath: "/app/locked" });
    const res = await s.tenant.admin.pit.rollback({
      params: { commitId: target!.id },
      body: { projectId: s.projectId, environment: "dev", folderId: target!.folderId, deepRollback: true },
    });
    expect(res).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("A change policy protects dev:/app/locked") },
    });
    const free = await s.tenant.admin.secretsV4.get({
      params: { secretName: "FREE" },
      query: { projectId: s.projectId, environment: "dev", secretPath: "/app" },
    });
    expect(free.status).toBe(200);
  });

  it("writes folder changes at once and asks approval for the secrets; refuses to refill a protected folder", async () => {
    const s = await setup();
    await write(s, "KEPT", "k");
    const [target] = await commitsOf(s);
    await write(s, "LATER", "l");
    await createFolder(s.tenant, s.projectId, "dev", "/", "extra");
    await protect(s, { approvals: 1 });
    const body = { projectId: s.projectId, environment: "dev", folderId: target!.folderId, deepRollback: false };
    const res = await s.committer.client.pit.rollback({ params: { commitId: target!.id }, body });
    expect(res.status).toBe(200);
    expect((res.body as { approval?: { id: string } }).approval).toBeDefined();
    const folders = async (path: string) =>
      expectOk(await s.tenant.admin.folders.list({ query: { workspaceId: s.projectId, environment: "dev", path } }))
        .folders;
    expect(await folders("/")).toEqual([]);
    expect(await valueOf(s, "LATER")).toBe("l");

    await createFolder(s.tenant, s.projectId, "dev", "/", "app");
    await write(s, "INSIDE", "i", "/app");
    const [withApp] = await commitsOf(s);
    expectOk(
      await s.tenant.admin.folders.delete({
        params: { folderIdOrName: "app" },
        body: { workspaceId: s.projectId, environment: "dev", path: "/" },
      }),
    );
    await protect(s, { secretPath: "/app" });
    const refill = await s.tenant.admin.pit.rollback({
      params: { commitId: withApp!.id },
      body: { ...body, folderId: withApp!.folderId },
    });
    expect(refill).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("A change policy protects dev:/app") },
    });
    expect(await folders("/")).toEqual([]);
  });
});
