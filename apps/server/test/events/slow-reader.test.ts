import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MAX_SECRET_NAME_LENGTH } from "@keyward/contract";
import { startTestApp, type TestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  app = await startTestApp({ EVENTS_MAX_BUFFERED_BYTES: "65536" });
  tenant = await createTenant(app);
});

afterAll(() => app.close());

it("drops a reader that does not keep up instead of buffering for it without bound", async () => {
  const projectId = (await createProject(tenant)).id;
  // A client that opens the stream and then never reads it.
  const closed = new Promise<void>((resolve, reject) => {
    const outgoing = request(
      `${app.baseUrl}/api/v1/events/subscribe/project-events`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.adminToken}`, "content-type": "application/json" },
      },
      (res) => {
        expect(res.statusCode).toBe(200);
        res.pause();
        res.socket.pause();
        res.on("close", () => resolve());
      },
    );
    outgoing.on("error", reject);
    outgoing.end(JSON.stringify({ projectId, register: [{ event: "secret:create" }] }));
  });
  await expect.poll(() => app.deps.eventHub.count()).toBe(1);
  // Each batch is one event naming 1,000 long keys (~0.5 MB of frame): the socket's buffers fill soon.
  const long = (i: number, n: number) => `K${i}_${n}_`.padEnd(MAX_SECRET_NAME_LENGTH, "x");
  let dropped = false;
  void closed.then(() => (dropped = true));
  for (let i = 0; i < 40 && !dropped; i += 1) {
    expectOk(
      await tenant.admin.secretsV4.batchCreate({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/",
          secrets: Array.from({ length: 1_000 }, (_, n) => ({ secretKey: long(i, n), secretValue: "v" })),
        },
      }),
    );
  }
  await closed;
  await expect.poll(() => app.deps.eventHub.count()).toBe(0);
}, 120_000);
