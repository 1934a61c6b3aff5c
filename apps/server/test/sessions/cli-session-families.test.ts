import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, type Tenant } from "../helpers/tenant";
import { auditEvents } from "../audit/helpers";
import { configureSso } from "../sso/sso-helpers";
import {
  cliSession,
  grantedCliSession,
  jarWith,
  newPerson,
  refresh,
  sessionWorks,
  signedInConsole,
  signIn,
} from "./session-helpers";

const DEAD = { access: 401, refresh: 401 };
const LIVE = { access: 200, refresh: 200 };

describe("command-line sessions started from the console's session", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
  });

  it("hands the command line a session of its own and the console its next refresh cookie", async () => {
    const console = await signedInConsole(tenant);
    const presented = console.jar.get("jid")!;
    const answer = await cliSession(tenant.app.baseUrl, console.jar);
    expect(answer.status, await answer.clone().text()).toBe(200);
    const cli = (await answer.json()) as { email: string; accessToken: string; refreshToken: string };
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith("jid="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/api\/v1\/auth/);
    const next = console.jar.get("jid")!;
    expect(next).toMatch(/^kwr_/);
    expect(next).not.toBe(presented);
    expect(cli.refreshToken).not.toBe(next);

    // The command line is the person, and renews with its own refresh token.
    expect(cli.email).toBe(console.person.email);
    const cliJar = jarWith(cli.refreshToken);
    expect(await sessionWorks(tenant, cli.accessToken, cliJar)).toEqual(LIVE);
    expect(cliJar.get("jid")).not.toBe(cli.refreshToken);
    // The console keeps its access token and renews with the cookie it was handed.
    expect(await sessionWorks(tenant, console.token, console.jar)).toEqual(LIVE);
    // Signing the console out leaves the command line signed in.
    const out = await fetch(`${tenant.app.baseUrl}/api/v1/auth/logout`, {
      method: "POST",
      headers: { cookie: console.jar.header() },
    });
    expect(out.status).toBe(200);
    expect((await tenant.app.client(console.token).sessions.checkAuth()).status).toBe(401);
    expect(await sessionWorks(tenant, cli.accessToken, cliJar)).toEqual(LIVE);
    // Without a live console session there is nothing to hand off.
    expect((await cliSession(tenant.app.baseUrl, console.jar)).status).toBe(401);
  });

  it("spends the console's refresh token: presenting it again is reuse and ends the whole family", async () => {
    const console = await signedInConsole(tenant);
    const presented = console.jar.get("jid")!;
    const first = await grantedCliSession(tenant.app.baseUrl, console.jar);

    const again = await cliSession(tenant.app.baseUrl, jarWith(presented));
    expect(again.status).toBe(401);
    expect(again.headers.getSetCookie().some((c) => c.startsWith("jid=;"))).toBe(true);

    expect(await sessionWorks(tenant, console.token, console.jar)).toEqual(DEAD);
    expect(await sessionWorks(tenant, first.accessToken, jarWith(first.refreshToken))).toEqual(DEAD);
    const reuse = (await auditEvents(tenant, { eventType: "create-cli-session" })).find(
      (event) => event.event.metadata.reuseDetected === true,
    );
    expect(reuse?.actor.metadata).toMatchObject({ email: console.person.email });
  });

  it("ends the command line's sessions when a spent console refresh token comes back", async () => {
    const console = await signedInConsole(tenant);
    const cliOne = await grantedCliSession(tenant.app.baseUrl, console.jar);
    const cliTwo = await grantedCliSession(tenant.app.baseUrl, console.jar);
    const spent = console.jar.get("jid")!;
    expect((await refresh(tenant.app.baseUrl, console.jar)).status).toBe(200);
    // Someone else's unrelated sign-in is untouched by what follows.
    const bystander = await signedInConsole(tenant);

    expect((await refresh(tenant.app.baseUrl, jarWith(spent))).status).toBe(401);
    expect(await sessionWorks(tenant, console.token, console.jar)).toEqual(DEAD);
    expect(await sessionWorks(tenant, cliOne.accessToken, jarWith(cliOne.refreshToken))).toEqual(DEAD);
    expect(await sessionWorks(tenant, cliTwo.accessToken, jarWith(cliTwo.refreshToken))).toEqual(DEAD);
    expect(await sessionWorks(tenant, bystander.token, bystander.jar)).toEqual(LIVE);
  });

  it("ends the console and its siblings when a command line's spent refresh token comes back", async () => {
    const console = await signedInConsole(tenant);
    const cli = await grantedCliSession(tenant.app.baseUrl, console.jar);
    const sibling = await grantedCliSession(tenant.app.baseUrl, console.jar);
    const cliJar = jarWith(cli.refreshToken);
    expect((await refresh(tenant.app.baseUrl, cliJar)).status).toBe(200);

    expect((await refresh(tenant.app.baseUrl, jarWith(cli.refreshToken))).status).toBe(401);
    expect(await sessionWorks(tenant, console.token, console.jar)).toEqual(DEAD);
    expect(await sessionWorks(tenant, cli.accessToken, cliJar)).toEqual(DEAD);
    expect(await sessionWorks(tenant, sibling.accessToken, jarWith(sibling.refreshToken))).toEqual(DEAD);
  });

  it("refuses a missing or unknown refresh cookie", async () => {
    const none = await fetch(`${tenant.app.baseUrl}/api/v1/auth/cli-session`, { method: "POST" });
    expect(none.status).toBe(401);
    expect((await cliSession(tenant.app.baseUrl, jarWith("kwr_not-a-token"))).status).toBe(401);
  });
});

describe("the family's absolute lifetime", () => {
  let app: TestApp;
  let tenant: Tenant;
  let offset = 0;
  beforeAll(async () => {
    app = await startTestApp({ SESSION_ABSOLUTE_TTL_S: "120" });
    app.deps.clock.now = () => Date.now() + offset;
    tenant = await createTenant(app);
    await configureSso(tenant);
  });
  afterAll(async () => {
    offset = 0;
    await app.close();
  });

  it("ends a command line's session, and its own command-line sessions, when the sign-in's lifetime ends", async () => {
    offset = 0;
    const console = await signIn(tenant, newPerson());
    offset = 60_000;
    const cli = await grantedCliSession(app.baseUrl, console.jar);
    const cliJar = jarWith(cli.refreshToken);
    offset = 100_000;
    // A command line's session starting another gets no fresh lifetime either.
    const grandchild = await grantedCliSession(app.baseUrl, cliJar);
    const grandchildJar = jarWith(grandchild.refreshToken);
    offset = 110_000;
    expect(await sessionWorks(tenant, cli.accessToken, cliJar)).toEqual(LIVE);
    expect(await sessionWorks(tenant, grandchild.accessToken, grandchildJar)).toEqual(LIVE);

    offset = 121_000;
    expect(await sessionWorks(tenant, console.token, console.jar)).toEqual(DEAD);
    expect(await sessionWorks(tenant, cli.accessToken, cliJar)).toEqual(DEAD);
    expect(await sessionWorks(tenant, grandchild.accessToken, grandchildJar)).toEqual(DEAD);
    expect((await cliSession(app.baseUrl, cliJar)).status).toBe(401);
    offset = 0;
  });
});
