import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/context";
import { createSecretListsState } from "../../src/modules/secrets/secrets.state";
import { createFolder, createSecretsScope, expectOk, type SecretsScope } from "./helpers";

/**
 * Large secret lists take turns (SECRET_LIST_SLOTS): here a list of more than 5 rows is large and the
 * process builds one at a time. The test holds the slot itself, so what waits and what is refused is
 * decided by the test, not by timing.
 */
describe("large secret lists take turns", () => {
  let scope: SecretsScope;
  let deps: AppDeps;
  let saved: AppDeps["secretLists"];
  const use = (queueTimeoutMs: number) =>
    (deps.secretLists = createSecretListsState({ largeRows: 5, slots: 1, queueTimeoutMs }).secretLists);
  const list = (secretPath: string, extra: { limit?: number } = {}) =>
    scope.tenant.admin.secretsV4.list({
      query: { projectId: scope.projectId, environment: "dev", secretPath, ...extra },
    });

  beforeAll(async () => {
    scope = await createSecretsScope();
    deps = scope.tenant.app.deps;
    saved = deps.secretLists;
    const { tenant, projectId } = scope;
    for (const name of ["large", "small"]) await createFolder(tenant, projectId, "dev", "/", name);
    const put = async (secretPath: string, count: number) =>
      expectOk(
        await tenant.admin.secretsV4.batchCreate({
          body: {
            projectId,
            environment: "dev",
            secretPath,
            secrets: Array.from({ length: count }, (_, i) => ({ secretKey: `K_${i}`, secretValue: `v${i}` })),
          },
        }),
      );
    await put("/large", 10);
    await put("/small", 3);
  });
  afterAll(() => {
    deps.secretLists = saved;
  });

  it("answers 503 with Retry-After when every slot is taken and the queue may not wait", async () => {
    const lists = use(0);
    const release = (await lists.gate.enter())!;
    try {
      const refused = await list("/large");
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({
        statusCode: 503,
        error: "ServiceUnavailable",
        message: "Too many large secret lists are being built at once; please retry shortly",
      });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // The v3 list (the operator's and the CLI's) takes the same turns.
      const v3 = await scope.http.get("/api/v3/secrets/raw", {
        workspaceId: scope.projectId,
        environment: "dev",
        secretPath: "/large",
      });
      expect(v3.status).toBe(503);
      expect(v3.headers.get("retry-after")).not.toBeNull();

      // Small lists, and a small page of the large folder, never wait.
      const small = expectOk(await list("/small"));
      expect(small.secrets.map((s) => s.secretKey)).toEqual(["K_0", "K_1", "K_2"]);
      const page = expectOk(await list("/large", { limit: 3 }));
      expect(page.secrets).toHaveLength(3);
      expect(page.totalCount).toBe(10);
    } finally {
      release();
    }
    const served = expectOk(await list("/large"));
    expect(served.secrets).toHaveLength(10);
    expect(lists.gate.running()).toBe(0);
  });

  it("queues a large list while the slot is taken and serves it once the slot is free", async () => {
    const lists = use(60_000);
    const release = (await lists.gate.enter())!;
    let settled = false;
    const waiting = list("/large").finally(() => (settled = true));
    while (lists.gate.waiting() === 0) await new Promise(setImmediate);
    // A small list passes the queued one.
    expectOk(await list("/small"));
    expect(settled).toBe(false);
    release();
    const served = expectOk(await waiting);
    expect(served.secrets.map((s) => s.secretValue)).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`).sort());
    expect(lists.gate.running()).toBe(0);
  });

  it("a burst of lists of a folder not yet seen: one reads the rows, all wait their turn and are served", async () => {
    const lists = use(60_000);
    const release = (await lists.gate.enter())!;
    const burst = Array.from({ length: 3 }, () => list("/large"));
    while (lists.gate.waiting() < 3) await new Promise(setImmediate);
    expect(lists.sizing.size).toBe(0);
    release();
    for (const answer of await Promise.all(burst)) expect(expectOk(answer).secrets).toHaveLength(10);
    expect(lists.gate.running()).toBe(0);
  });

  it("a list seen large waits before reading its rows; once it has shrunk it no longer waits", async () => {
    const lists = use(60_000);
    expectOk(await list("/large"));
    const release = (await lists.gate.enter())!;
    const waiting = list("/large");
    // Known large: it is queued before any row is read.
    while (lists.gate.waiting() === 0) await new Promise(setImmediate);
    release();
    expectOk(await waiting);

    const { tenant, projectId } = scope;
    expectOk(
      await tenant.admin.secretsV4.batchDelete({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/large",
          secrets: Array.from({ length: 6 }, (_, i) => ({ secretKey: `K_${i}` })),
        },
      }),
    );
    // Read once more (in turn, as it was seen large), found small: forgotten.
    expect(expectOk(await list("/large")).secrets).toHaveLength(4);
    const held = (await lists.gate.enter())!;
    try {
      expect(expectOk(await list("/large")).secrets).toHaveLength(4);
    } finally {
      held();
    }
  });
});
