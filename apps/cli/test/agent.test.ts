import { readdirSync, statSync, writeFileSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createKeywardClient, ok } from "@keyward/client";
import { freePort } from "@keyward/test-services";
import { admin, createScope, keyward, unique, url } from "./helpers";
import { canLogin } from "./postgres-target";
import {
  readIfAny,
  sleep,
  startKeyward,
  stopAgent,
  waitFor,
  workspace,
  type LogLine,
  type Running,
} from "./agent-helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
const running: Running[] = [];

const agent = (configFile: string) => {
  const started = startKeyward(["agent", "--config", configFile]);
  running.push(started);
  return started;
};

const setSecrets = (secrets: Record<string, string>, secretPath = "/") =>
  ok(
    admin().secretsV4.batchUpdate({
      body: {
        projectId: scope.project.id,
        environment: "dev",
        secretPath,
        mode: "upsert",
        secrets: Object.entries(secrets).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      },
    }),
  );

const server = () => ({ address: url() });
const tokenAuth = () => ({ type: "token", config: { token: scope.token } });
const logged = (a: Running, msg: string, match: (l: LogLine) => boolean = () => true) =>
  a.lines.find((l) => l.msg === msg && match(l));

/** A dynamic secret on the test PostgreSQL with one-minute leases and the given max TTL. */
const createPgDynamicSecret = async (maxTTL: string) => {
  const target = new URL(inject("pgTargetUrl"));
  const name = unique("pg");
  await ok(
    admin().dynamicSecrets.create({
      body: {
        projectSlug: scope.project.slug,
        environmentSlug: "dev",
        path: "/",
        name,
        provider: {
          type: "sql-database",
          inputs: {
            client: "postgres",
            host: target.hostname,
            port: Number(target.port),
            database: "postgres",
            username: decodeURIComponent(target.username),
            password: decodeURIComponent(target.password),
          },
        },
        defaultTTL: "1m",
        maxTTL,
      },
    }),
  );
  return name;
};

beforeAll(async () => {
  scope = await createScope();
  await setSecrets({ DB_URL: "postgres://one", API_KEY: "k1" });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map(stopAgent));
});

describe("keyward agent", () => {
  it("renders a template, follows a change within 2 s, writes atomically with mode 0600 and runs the command once per change", async () => {
    const ws = workspace();
    const out = ws.path("out/app.env");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: tokenAuth(),
        templates: [
          {
            "template-content": `{% secrets "${scope.project.id}" "dev" "/" as all %}{% for s in all %}{{ s.key }}={{ s.value }}\n{% endfor %}url={% getSecretByName "${scope.project.id}" "dev" "/" "DB_URL" %}\n`,
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
    for (const value of ["postgres://one", "postgres://two", "k1", "k2", scope.token]) {
      expect(a.stderr()).not.toContain(value);
    }
  });

  it("renders a folder again when a folder it imports changes (an import mutation on the stream)", async () => {
    const client = admin();
    for (const name of ["shared", "importer"]) {
      await ok(client.folders.create({ body: { workspaceId: scope.project.id, environment: "dev", path: "/", name } }));
    }
    await setSecrets({ SHARED: "s1" }, "/shared");
    await setSecrets({ OWN: "o1" }, "/importer");
    await ok(
      client.secretImports.create({
        body: {
          workspaceId: scope.project.id,
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
            "template-content": `{% listSecrets "${scope.project.id}" "dev" "/importer" %}`,
            "destination-path": out,
            config: { "polling-interval": "5m" },
          },
        ],
      }),
    );
    await waitFor("the first render", () => readIfAny(out) === "SHARED=s1\nOWN=o1\n");
    await waitFor("the events stream", () => logged(a, "events stream connected"));
    await setSecrets({ SHARED: "s2" }, "/shared");
    await waitFor("the imported change", () => readIfAny(out) === "SHARED=s2\nOWN=o1\n", 20_000);
  });

  it("polls at the template's interval when the events stream is refused (a viewer may not subscribe)", async () => {
    const viewer = await createScope("viewer");
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
        auth: { type: "universal-auth", config: { "client-id": "x" } },
        templates: [{ "destination-path": ws.path("x"), config: { "polling-interval": "soon" } }],
      }),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("give client-secret or client-secret-file");
    expect(result.stderr).toContain("give exactly one of source-path and template-content");
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
            "template-content": `{% getSecretByName "${scope.project.id}" "dev" "/" "NO_SUCH_SECRET" %}`,
            "destination-path": broken,
          },
          {
            name: "good",
            "template-content": `{% getSecretByName "${scope.project.id}" "dev" "/" "API_KEY" %}`,
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
      "template-content": `{{ "x" }}{% getSecretByName "${scope.project.id}" "dev" "/" "${name}" %}`,
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

  it("renews a lease before it ends, and on SIGTERM revokes its leases and its token and exits 0", async () => {
    const target = new URL(inject("pgTargetUrl"));
    const name = await createPgDynamicSecret("1h");
    const ws = workspace();
    const out = ws.path("db.env");
    const sink = ws.path("token");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: { type: "universal-auth", config: { "client-id": scope.clientId, "client-secret": scope.clientSecret } },
        sinks: [{ type: "file", config: { path: sink } }],
        // A one-minute lease renewed 55 s before it ends: the first renewal comes after about 5 s.
        leases: { "renew-before": "55s" },
        templates: [
          {
            "template-content": `{% dynamicSecret "${scope.project.slug}" "dev" "/" "${name}" "1m" as db %}user={{ db.DB_USERNAME }}\npassword={{ db.DB_PASSWORD }}\n`,
            "destination-path": out,
          },
          // A second template asking for the same lease shares it.
          {
            "template-content": `{% dynamicSecret "${scope.project.slug}" "dev" "/" "${name}" "1m" as db %}{{ db.DB_USERNAME }}`,
            "destination-path": ws.path("user.txt"),
          },
        ],
      }),
    );
    const content = await waitFor("the lease's credentials", () => readIfAny(out));
    const [, user, password] = /^user=(\S+)\npassword=(\S+)\n$/.exec(content) ?? [];
    expect(canLogin(target.toString(), user!, password!)).toBe(true);
    const token = readIfAny(sink)!;
    expect(statSync(sink).mode & 0o777).toBe(0o600);
    expect(await waitFor("the second template", () => readIfAny(ws.path("user.txt")))).toBe(user);
    expect(a.lines.filter((l) => l.msg === "lease taken")).toHaveLength(1);
    const taken = logged(a, "lease taken")!;
    const leaseId = String(taken.lease);
    const leaseScope = { projectSlug: scope.project.slug, environmentSlug: "dev", path: "/" };
    const before = await ok(admin().dynamicSecretLeases.get({ params: { leaseId }, query: leaseScope }));

    const renewed = await waitFor("the lease's renewal", () => logged(a, "lease renewed"), 15_000);
    expect(renewed.lease).toBe(leaseId);
    const after = await ok(admin().dynamicSecretLeases.get({ params: { leaseId }, query: leaseScope }));
    expect(Date.parse(after.lease.expireAt)).toBeGreaterThan(Date.parse(before.lease.expireAt));
    // Renewal keeps the same credentials: the file is not rewritten.
    expect(readIfAny(out)).toBe(content);

    a.child.kill("SIGTERM");
    expect(await a.exited).toMatchObject({ code: 0 });
    const gone = await admin().dynamicSecretLeases.get({ params: { leaseId }, query: leaseScope });
    expect(gone.status).toBe(404);
    expect(canLogin(target.toString(), user!, password!)).toBe(false);
    const self = await createKeywardClient({ baseUrl: url(), token }).accessTokens.self();
    expect(self.status).toBe(401);
    expect(a.stderr()).not.toContain(token);
    expect(a.stderr()).not.toContain(password!);
  });

  it("renews its token at two thirds of its TTL and logs in again before the max TTL ends", async () => {
    const client = admin();
    const { identity } = await ok(
      client.identities.create({ body: { name: unique("short"), organizationId: inject("orgId"), role: "no-access" } }),
    );
    await ok(
      client.projects.addIdentityMembership({
        params: { projectId: scope.project.id, identityId: identity.id },
        body: { role: "viewer" },
      }),
    );
    // A 3 s token renewable to 9 s: renewed after 2 s, replaced by a new login after 4 s.
    const ua = await ok(
      client.universalAuth.attach({
        params: { identityId: identity.id },
        body: { accessTokenTTL: 3, accessTokenMaxTTL: 9 },
      }),
    );
    const { clientSecret } = await ok(
      client.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
    );
    const ws = workspace();
    const sink = ws.path("token");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: {
          type: "universal-auth",
          config: { "client-id": ua.identityUniversalAuth.clientId, "client-secret": clientSecret },
        },
        sinks: [{ type: "file", config: { path: sink } }],
        templates: [
          {
            "template-content": `{% getSecretByName "${scope.project.id}" "dev" "/" "API_KEY" %}`,
            "destination-path": ws.path("key.txt"),
          },
        ],
      }),
    );
    const first = await waitFor("the first token", () => readIfAny(sink));
    await waitFor("a renewal", () => logged(a, "access token renewed"), 5000);
    await waitFor(
      "a new login",
      () => a.lines.filter((l) => l.msg === "logged in with universal auth").length >= 2,
      8000,
    );
    const second = await waitFor("the new token in the sink", () => {
      const now = readIfAny(sink);
      return now !== first ? now : undefined;
    });
    const self = await createKeywardClient({ baseUrl: url(), token: second }).accessTokens.self();
    expect(self.status).toBe(200);
    expect(a.stderr()).not.toContain(first);
    expect(a.stderr()).not.toContain(second);
  });

  it("logs in again when its token is revoked under it, and renders the next change", async () => {
    await setSecrets({ REVOKE_CHECK: "before" });
    const ws = workspace();
    const out = ws.path("key.txt");
    const sink = ws.path("token");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: { type: "universal-auth", config: { "client-id": scope.clientId, "client-secret": scope.clientSecret } },
        sinks: [{ type: "file", config: { path: sink } }],
        templates: [
          {
            "template-content": `{% getSecretByName "${scope.project.id}" "dev" "/" "REVOKE_CHECK" %}`,
            "destination-path": out,
          },
        ],
      }),
    );
    await waitFor("the first render", () => readIfAny(out) === "before");
    await waitFor("the events stream", () => logged(a, "events stream connected"));
    const revoked = readIfAny(sink)!;
    await ok(createKeywardClient({ baseUrl: url() }).accessTokens.revoke({ body: { accessToken: revoked } }));
    await setSecrets({ REVOKE_CHECK: "after-revocation" });
    await waitFor("the change", () => readIfAny(out) === "after-revocation", 5000);
    expect(readIfAny(sink)).not.toBe(revoked);
    expect(a.lines.filter((l) => l.msg === "logged in with universal auth")).toHaveLength(2);
  });

  it("takes a new lease when the max TTL lets the old one go no further, renders again, and revokes both on SIGTERM", async () => {
    const target = new URL(inject("pgTargetUrl"));
    const name = await createPgDynamicSecret("1m");
    const ws = workspace();
    const out = ws.path("db.env");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: tokenAuth(),
        leases: { "renew-before": "55s" },
        templates: [
          {
            "template-content": `{% dynamicSecret "${scope.project.slug}" "dev" "/" "${name}" "1m" as db %}{{ db.DB_USERNAME }} {{ db.DB_PASSWORD }}`,
            "destination-path": out,
            config: { execute: { command: ws.countCommand } },
          },
        ],
      }),
    );
    const first = await waitFor("the first lease's credentials", () => readIfAny(out));
    await waitFor("the replacement", () => logged(a, "lease cannot be renewed; taking a new one"), 15_000);
    const second = await waitFor("the new credentials", () => {
      const now = readIfAny(out);
      return now !== first ? now : undefined;
    });
    const leaseIds = a.lines.filter((l) => l.msg === "lease taken").map((l) => String(l.lease));
    expect(new Set(leaseIds).size).toBe(2);
    await waitFor("the command run for the new credentials", () => ws.runs() === 2, 5000);
    const [user1, password1] = first.split(" ");
    const [user2, password2] = second.split(" ");
    // The old lease is left to end by itself while the agent runs; the new one works.
    expect(canLogin(target.toString(), user2!, password2!)).toBe(true);

    a.child.kill("SIGTERM");
    expect(await a.exited).toMatchObject({ code: 0 });
    const leaseScope = { projectSlug: scope.project.slug, environmentSlug: "dev", path: "/" };
    for (const leaseId of leaseIds) {
      const gone = await admin().dynamicSecretLeases.get({ params: { leaseId }, query: leaseScope });
      expect(gone.status).toBe(404);
    }
    expect(canLogin(target.toString(), user1!, password1!)).toBe(false);
    expect(canLogin(target.toString(), user2!, password2!)).toBe(false);
  });
});
