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
/** A stopping server closes whatever is still open after 1 s, so the test does not wait out the default 10 s. */
const serverEnv = { SHUTDOWN_TIMEOUT_MS: "1000" };

afterAll(async () => {
  if (agent) await stopAgent(agent);
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it("reconnects after the server restarts, catches up, and runs the command once for one change", async () => {
  const port = await freePort();
  server = await startServer({ port, dataDir, env: serverEnv });
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
          // No polling within the test: the catch-up comes from the stream's reconnection.
          config: { "polling-interval": "5m", execute: { command: ws.countCommand } },
        },
      ],
    }),
  ]);
  await waitFor("the first render", () => readIfAny(out) === "before");
  await waitFor("the first command run", () => ws.runs() === 1);
  await waitFor("the events stream", () => agent!.lines.some((l) => l.msg === "events stream connected"));
  // One change through the stream, so the agent has an event id to resume from.
  await set("middle");
  await waitFor("the change through the stream", () => readIfAny(out) === "middle", 5000);
  await waitFor("the second command run", () => ws.runs() === 2, 5000);

  await server.stop();
  // While Keyward is down the agent keeps the file and keeps running.
  await sleep(1500);
  expect(readIfAny(out)).toBe("middle");
  expect(agent.child.exitCode).toBeNull();

  server = await startServer({ port, dataDir, env: serverEnv });
  await set("after");
  await waitFor("the change after the restart", () => readIfAny(out) === "after", 40_000);
  expect(agent.lines.some((l) => l.msg === "events stream connected" && l.resumed === true)).toBe(true);
  await sleep(2500);
  expect(ws.runs()).toBe(3);
  expect(agent.child.exitCode).toBeNull();
  expect(agent.stderr()).not.toContain(token);
});
