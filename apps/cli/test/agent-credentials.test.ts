import { statSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { createKeywardClient, ok } from "@keyward/client";
import { admin, unique, url } from "./helpers";
import { canLogin } from "./postgres-target";
import { readIfAny, waitFor, workspace } from "./agent-helpers";
import {
  agent,
  createPgDynamicSecret,
  logged,
  server,
  setSecrets,
  suite,
  tokenAuth,
  useAgentSuite,
  universalAuth,
} from "./agent-suite";

useAgentSuite();

describe("keyward agent: leases and tokens", () => {
  it("renews a lease before it ends, and on SIGTERM revokes its leases and its token and exits 0", async () => {
    const target = new URL(inject("pgTargetUrl"));
    const name = await createPgDynamicSecret("1h");
    const ws = workspace();
    const out = ws.path("db.env");
    const sink = ws.path("token");
    const a = agent(
      ws.writeConfig({
        keyward: server(),
        auth: universalAuth(),
        sinks: [{ type: "file", config: { path: sink } }],
        // A one-minute lease renewed 55 s before it ends: the first renewal comes after about 5 s.
        leases: { "renew-before": "55s" },
        templates: [
          {
            "template-content": `{% dynamicSecret "${suite.scope.project.slug}" "dev" "/" "${name}" "1m" as db %}user={{ db.DB_USERNAME }}\npassword={{ db.DB_PASSWORD }}\n`,
            "destination-path": out,
          },
          // A second template asking for the same lease shares it.
          {
            "template-content": `{% dynamicSecret "${suite.scope.project.slug}" "dev" "/" "${name}" "1m" as db %}{{ db.DB_USERNAME }}`,
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
    const leaseScope = { projectSlug: suite.scope.project.slug, environmentSlug: "dev", path: "/" };
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
        params: { projectId: suite.scope.project.id, identityId: identity.id },
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
          config: { "client-id-value": ua.identityUniversalAuth.clientId, "client-secret-value": clientSecret },
        },
        sinks: [{ type: "file", config: { path: sink } }],
        templates: [
          {
            "template-content": `{% getSecretByName "${suite.scope.project.id}" "dev" "/" "API_KEY" %}`,
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
        auth: universalAuth(),
        sinks: [{ type: "file", config: { path: sink } }],
        templates: [
          {
            "template-content": `{% getSecretByName "${suite.scope.project.id}" "dev" "/" "REVOKE_CHECK" %}`,
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
            "template-content": `{% dynamicSecret "${suite.scope.project.slug}" "dev" "/" "${name}" "1m" as db %}{{ db.DB_USERNAME }} {{ db.DB_PASSWORD }}`,
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
    const leaseScope = { projectSlug: suite.scope.project.slug, environmentSlug: "dev", path: "/" };
    for (const leaseId of leaseIds) {
      const gone = await admin().dynamicSecretLeases.get({ params: { leaseId }, query: leaseScope });
      expect(gone.status).toBe(404);
    }
    expect(canLogin(target.toString(), user1!, password1!)).toBe(false);
    expect(canLogin(target.toString(), user2!, password2!)).toBe(false);
  });
});
