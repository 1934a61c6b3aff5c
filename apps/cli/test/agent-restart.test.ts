import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createKeywardClient, ok } from "@keyward/client";
import { freePort } from "@keyward/test-services";
import { readIfAny, sleep, startKeyward, stopAgent, waitFor, workspace, type Running } from "./agent-helpers";
import { startServer, type ServerProcess } from "./server-process";

/** This file's own server (its own data folder and fixed port), stopped and started again under the agent. */
const dataDir = mkdtempSync(join(tmpdir(), "keyward-cli-restart-"));
let server: ServerProcess | undefined;
let agent: Running | undefined;

afterAll(async () => {
  if (agent) await stopAgent(agent);
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it("reconnects after the server restarts, catches up, and runs the command once for one change", async () => {
  const port = await freePort();
  server = await startServer({ port, dataDir });
  const bootstrap = await fetch(`${server.url}/api/v1/admin/bootstrap`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "admin@restart.test", password: "restart-tests-password", organization: "restart" }),
  });
  expect(bootstrap.status).toBe(200);
  const token = ((await bootstrap.json()) as { identity: { credentials: { token: string } } }).identity.credentials
    .token;
  const client = createKeywardClient({ baseUrl: server.url, token });
  const { project } = await ok(client.projects.create({ body: { projectName: "restart" } }));
  const set = (value: string) =>
    ok(
      client.secretsV4.batchUpdate({
        body: {
          projectId: project.id,
          environment: "dev",
          secretPath: "/",
          mode: "upsert",
          secrets: [{ secretKey: "VALUE", secretValue: value }],
        },
      }),
    );
  await set("before");

  const ws = workspace();
  const out = ws.path("value.txt");
  agent = startKeyward([
    "agent",
    "--config",
    ws.writeConfig({
      keyward: { address: server.url },
      auth: { type: "token", config: { token } },
      templates: [
        {
          "template-content": `{% getSecretByName "${project.id}" "dev" "/" "VALUE" %}`,
          "destination-path": out,
          config: { "polling-interval": "1s", execute: { command: ws.countCommand } },
        },
      ],
    }),
  ]);
  await waitFor("the first render", () => readIfAny(out) === "before");
  await waitFor("the first command run", () => ws.runs() === 1);

  await server.stop();
  // While Keyward is down the agent keeps the file and keeps running.
  await sleep(1500);
  expect(readIfAny(out)).toBe("before");
  expect(agent.child.exitCode).toBeNull();

  server = await startServer({ port, dataDir });
  await set("after");
  await waitFor("the change after the restart", () => readIfAny(out) === "after", 20_000);
  await sleep(2500);
  expect(ws.runs()).toBe(2);
  expect(agent.child.exitCode).toBeNull();
  expect(agent.stderr()).not.toContain(token);
});
