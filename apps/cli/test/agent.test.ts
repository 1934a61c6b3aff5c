import { readdirSync, statSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ok } from "@keyward/client";
import { freePort } from "@keyward/test-services";
import { admin, createScope, keyward } from "./helpers";
import { readIfAny, sleep, waitFor, workspace } from "./agent-helpers";
import { agent, logged, server, setSecrets, suite, tokenAuth, useAgentSuite } from "./agent-suite";

useAgentSuite();

describe("keyward agent", () => {
  it("renders a template, follows a change through the events stream, writes atomically with mode 0600 and runs the command once per change", async () => {
    const ws = workspace();
    const out = ws.path("out/app.env");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: tokenAuth(),
        templates: [
          {
            "template-content": `{% secrets "${suite.scope.project.id}" "dev" "/" as all %}{% for s in all %}{{ s.key }}={{ s.value }}\n{% endfor %}url={% getSecretByName "${suite.scope.project.id}" "dev" "/" "DB_URL" %}\n`,
            "destination-path": out,
            // Polling is the fallback only (every 5 min): a change seen within seconds came through the events stream.
            config: { "polling-interval": "5m", execute: { command: ws.countCommand, timeout: "10s" } },
          },
        ],
      }),
    );
    await waitFor("the first render", () => readIfAny(out)?.includes("url=postgres://one"));
    expect(readIfAny(out)).toBe("API_KEY=k1\nDB_URL=postgres://one\nurl=postgres://one\n");
    expect(statSync(out).mode & 0o777).toBe(0o600);
    await waitFor("the first command run", () => ws.runs() === 1);
    await waitFor("the events stream", () => logged(a, "events stream connected"));
    const inode = statSync(out).ino;

    // A burst of changes: one file write per content, one command run for the burst.
    await setSecrets({ DB_URL: "postgres://two" });
    await setSecrets({ API_KEY: "k2" });
    // The bound is far below the polling interval, and wide enough for a machine busy with other suites.
    await waitFor("the change in the file", () => readIfAny(out)?.includes("API_KEY=k2"), 20_000);
    expect(readIfAny(out)).toBe("API_KEY=k2\nDB_URL=postgres://two\nurl=postgres://two\n");
    // Replaced by a rename, not rewritten in place, and no temporary file left behind.
    expect(statSync(out).ino).not.toBe(inode);
    expect(readdirSync(ws.path("out"))).toEqual(["app.env"]);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    await sleep(2500);
    expect(ws.runs()).toBe(2);
    expect(logged(a, "command ran")).toMatchObject({ exitCode: 0 });

    // Nothing a secret holds ever reaches the log.
    for (const value of ["postgres://one", "postgres://two", "k1", "k2", suite.scope.token]) {
      expect(a.stderr()).not.toContain(value);
    }
  });

  it("renders a folder again when a folder it imports changes (an import mutation on the stream)", async () => {
    const client = admin();
    for (const name of ["shared", "importer"]) {
      await ok(
        client.folders.create({ body: { workspaceId: suite.scope.project.id, environment: "dev", path: "/", name } }),
      );
    }
    await setSecrets({ SHARED: "s1" }, "/shared");
    await setSecrets({ OWN: "o1" }, "/importer");
    await ok(
      client.secretImports.create({
        body: {
          workspaceId: suite.scope.project.id,
          environment: "dev",
          path: "/importer",
          import: { environment: "dev", path: "/shared" },
        },
      }),
    );
    const ws = workspace();
    const out = ws.path("imported.env");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: tokenAuth(),
        templates: [
          {
            "template-content": `{% listSecrets "${suite.scope.project.id}" "dev" "/importer" %}`,
            "destination-path": out,
            config: { "polling-interval": "5m" },
          },
        ],
      }),
    );
    await waitFor("the first render", () => readIfAny(out) === "SHARED=s1\nOWN=o1\n");
    await waitFor("the events stream", () => logged(a, "events stream connected"));
    // Past the re-read the agent makes once connected: only the import mutation event can bring s2 now.
    await sleep(500);
    await setSecrets({ SHARED: "s2" }, "/shared");
    await waitFor("the imported change", () => readIfAny(out) === "SHARED=s2\nOWN=o1\n", 20_000);
  });

  it("polls at the template's interval when the events stream is refused (a reader without secret-events)", async () => {
    const viewer = await createScope("secret-reader", [
      { subject: "secrets", action: ["describeSecret", "readValue"] },
      { subject: "secret-folders", action: ["read"] },
    ]);
    await ok(
      admin().secretsV4.batchUpdate({
        body: {
          projectId: viewer.project.id,
          environment: "dev",
          secretPath: "/",
          mode: "upsert",
          secrets: [{ secretKey: "POLLED", secretValue: "p1" }],
        },
      }),
    );
    const ws = workspace();
    const out = ws.path("polled.txt");
    const port = await freePort();
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: { type: "token", config: { token: viewer.token } },
        health: { address: `127.0.0.1:${port}` },
        templates: [
          {
            "template-content": `{% getSecretByName "${viewer.project.id}" "dev" "/" "POLLED" %}`,
            "destination-path": out,
            config: { "polling-interval": "1s" },
          },
        ],
      }),
    );
    await waitFor("the first render", () => readIfAny(out) === "p1");
    const refused = await waitFor("the refused stream", () => logged(a, "events stream unavailable; polling"));
    expect(refused.reason).toMatch(/^403/);
    await ok(
      admin().secretsV4.batchUpdate({
        body: {
          projectId: viewer.project.id,
          environment: "dev",
          secretPath: "/",
          mode: "upsert",
          secrets: [{ secretKey: "POLLED", secretValue: "p2" }],
        },
      }),
    );
    await waitFor("the change through polling", () => readIfAny(out) === "p2", 15_000);
    const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { stream: string };
    expect(health.stream).toBe("polling");
  });

  it("refuses a config it cannot use, naming what is wrong", async () => {
    const ws = workspace();
    const result = await keyward([
      "agent",
      "--config",
      ws.writeConfig({
        keyward: server(),
        auth: { type: "universal-auth", config: { "client-id-value": "x" } },
        templates: [{ "destination-path": ws.path("x"), config: { "polling-interval": "soon" } }],
      }),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "give client-secret (the path of a file holding the client secret) or client-secret-value",
    );
    expect(result.stderr).toContain("give exactly one of source-path, template-content and base64-template-content");
    expect(result.stderr).toContain("templates.0.config.polling-interval: not a duration: soon");
  });

  it("leaves the old file of a template that fails, says why, and renders the others", async () => {
    const ws = workspace();
    const broken = ws.path("broken.txt");
    const good = ws.path("good.txt");
    writeFileSync(broken, "old content\n");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: tokenAuth(),
        templates: [
          {
            name: "broken",
            "template-content": `{% getSecretByName "${suite.scope.project.id}" "dev" "/" "NO_SUCH_SECRET" %}`,
            "destination-path": broken,
          },
          {
            name: "good",
            "template-content": `{% getSecretByName "${suite.scope.project.id}" "dev" "/" "API_KEY" %}`,
            "destination-path": good,
          },
        ],
      }),
    );
    await waitFor("the good template", () => readIfAny(good));
    const failure = await waitFor("the failure's log line", () =>
      logged(a, "template failed; its file is left as it was", (l) => l.template === "broken"),
    );
    expect(failure.reason).toContain("NO_SUCH_SECRET not found in / of environment 'dev'");
    expect(readIfAny(broken)).toBe("old content\n");
    expect(readIfAny(good)).toMatch(/^k\d$/);
  });

  it("re-reads its config on SIGHUP and answers on its health endpoint", async () => {
    const ws = workspace();
    const port = await freePort();
    const first = ws.path("first.txt");
    const second = ws.path("second.txt");
    const template = (dest: string, name: string) => ({
      "template-content": `{{ "x" }}{% getSecretByName "${suite.scope.project.id}" "dev" "/" "${name}" %}`,
      "destination-path": dest,
    });
    const config = {
      keyward: server(),
      auth: tokenAuth(),
      health: { address: `127.0.0.1:${port}` },
      templates: [template(first, "API_KEY")],
    };
    const file = ws.writeConfig(config);
    const a = agent(file);
    await waitFor("the first render", () => readIfAny(first));
    const health = await waitFor("the health report", async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
      return response?.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    });
    expect(health).toMatchObject({ status: "ok", templates: [{ name: first, status: "ok" }] });
    expect(["connected", "polling"]).toContain(health.stream);
    expect(typeof health.lastRenderAt).toBe("string");

    ws.writeConfig({ ...config, templates: [template(first, "API_KEY"), template(second, "DB_URL")] });
    a.child.kill("SIGHUP");
    await waitFor("the new template's file", () => readIfAny(second)?.startsWith("xpostgres://"));
    const after = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { templates: unknown[] };
    expect(after.templates).toHaveLength(2);
    expect(a.child.exitCode).toBeNull();
  });
});
