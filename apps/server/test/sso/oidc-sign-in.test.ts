import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import {
  authorizeAtProvider,
  configureSso,
  CookieJar,
  finishAtKeyward,
  refresh,
  rootTenantOf,
  signIn,
} from "./sso-helpers";

const personOf = (domain = "example.test") => {
  const name = uniqueName("person");
  return { sub: `sub-${name}`, email: `${name}@${domain}`, givenName: "Ada", familyName: "Lovelace" };
};

describe("signing in with the organization's OpenID Connect provider", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant, { allowedEmailDomains: "example.test, Other.Test" });
  });

  it("starts a session for a verified person, who sees who they are and nothing they were not given", async () => {
    const person = personOf();
    const session = await signIn(tenant, person);
    expect(session.redirectedTo).toBe(`${tenant.app.baseUrl}/`);
    const { user } = expectOk(await session.client.users.me());
    expect(user).toMatchObject({ email: person.email, firstName: "Ada", lastName: "Lovelace", isEmailVerified: true });
    expect(user.authMethods).toEqual(["oidc"]);
    expect(expectOk(await session.client.users.meV2()).user.id).toBe(user.id);
    const self = await session.client.accessTokens.self();
    expect(self.status).toBe(403);
    expect(self.body).toMatchObject({ message: expect.stringContaining("GET /api/v1/user") });
    const { organizations } = expectOk(await session.client.users.organizations());
    expect(organizations.map((o) => o.id)).toEqual([tenant.orgId]);
    // Not invited: a member without access, who sees no project.
    await createProject(tenant);
    expect(expectOk(await session.client.projects.listWorkspaces({ query: {} })).workspaces).toEqual([]);
    const people = expectOk(
      await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } }),
    ).users.find((m) => m.user?.email === person.email);
    expect(people).toMatchObject({ role: "no-access", status: "accepted", isActive: true });
    // The same person signing in again is the same user.
    const again = await signIn(tenant, person);
    expect(expectOk(await again.client.users.me()).user.id).toBe(user.id);
  });

  it("claims an invitation at first sign-in with that e-mail, with the projects it names", async () => {
    const project = await createProject(tenant);
    const person = personOf("other.test");
    const invited = expectOk(
      await tenant.admin.users.inviteToOrg({
        body: {
          inviteeEmails: [person.email],
          organizationId: tenant.orgId,
          organizationRoleSlug: "member",
          projectIds: [project.id],
        },
      }),
    );
    expect(invited.completeInviteLinks).toEqual([
      { email: person.email, link: expect.stringContaining(`/login?org=${tenant.orgSlug}&email=`) },
    ]);
    const pending = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
    expect(pending.find((m) => m.inviteEmail === person.email)).toMatchObject({ status: "invited", user: null });

    const session = await signIn(tenant, person);
    const memberships = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } }));
    expect(memberships.users.find((m) => m.user?.email === person.email)).toMatchObject({
      role: "member",
      status: "accepted",
    });
    const { workspaces } = expectOk(await session.client.projects.listWorkspaces({ query: {} }));
    expect(workspaces.map((w) => w.id)).toEqual([project.id]);
    // Inviting someone who is now a member is a clear 400.
    const twice = await tenant.admin.users.inviteToOrg({
      body: { inviteeEmails: [person.email], organizationId: tenant.orgId, organizationRoleSlug: "member" },
    });
    expect(twice.status).toBe(400);
  });

  it("rotates the refresh token, and a refresh token used twice ends the whole session", async () => {
    const session = await signIn(tenant, personOf());
    const first = session.jar.get("jid")!;
    const rotated = await refresh(tenant.app.baseUrl, session.jar);
    expect(rotated.status).toBe(200);
    const second = session.jar.get("jid")!;
    expect(second).not.toBe(first);
    const cookie = rotated.headers.getSetCookie().find((c) => c.startsWith("jid="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/api\/v1\/auth/);

    const replay = new CookieJar();
    replay.set("jid", first);
    expect((await refresh(tenant.app.baseUrl, replay)).status).toBe(401);
    // The replay revoked the family: the newest refresh token and the access token are dead too.
    expect((await refresh(tenant.app.baseUrl, session.jar)).status).toBe(401);
    expect((await session.client.users.me()).status).toBe(401);
  });

  it("signs out server-side, and signs out everywhere", async () => {
    const person = personOf();
    const one = await signIn(tenant, person);
    const two = await signIn(tenant, person);
    const three = await signIn(tenant, person);
    const out = await fetch(`${tenant.app.baseUrl}/api/v1/auth/logout`, {
      method: "POST",
      headers: { cookie: one.jar.header() },
    });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().some((c) => c.startsWith("jid=;"))).toBe(true);
    expect((await one.client.users.me()).status).toBe(401);
    expect((await two.client.users.me()).status).toBe(200);

    expect(expectOk(await two.client.users.revokeMySessions()).message).toBe("Signed out of 2 sessions");
    expect((await two.client.users.me()).status).toBe(401);
    expect((await three.client.users.me()).status).toBe(401);
    expect((await refresh(tenant.app.baseUrl, three.jar)).status).toBe(401);
  });

  it("refuses a wrong state, a replayed callback, and a callback from another browser", async () => {
    const person = personOf();
    const { callbackUrl, keyward } = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, person);
    const wrongState = new URL(callbackUrl);
    wrongState.searchParams.set("state", "not-the-state");
    expect((await finishAtKeyward(wrongState.toString(), keyward)).status).toBe(400);

    const otherBrowser = await finishAtKeyward(callbackUrl, new CookieJar());
    expect(otherBrowser.status).toBe(400);
    expect(((await otherBrowser.json()) as { message: string }).message).toMatch(/already used|another browser/);

    const fresh = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, person);
    expect((await finishAtKeyward(fresh.callbackUrl, fresh.keyward)).status).toBe(302);
    const replayed = await finishAtKeyward(fresh.callbackUrl, fresh.keyward);
    expect(replayed.status).toBe(400);
    expect(((await replayed.json()) as { message: string }).message).toMatch(/already used/);
  });

  it("refuses an e-mail the provider has not verified, and one outside the allowed domains", async () => {
    const unverified = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, {
      ...personOf(),
      verified: false,
    });
    const refused = await finishAtKeyward(unverified.callbackUrl, unverified.keyward);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toMatch(/not verified/);

    const outside = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, personOf("elsewhere.test"));
    const denied = await finishAtKeyward(outside.callbackUrl, outside.keyward);
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { message: string }).message).toMatch(/elsewhere\.test is not allowed/);
  });

  it("never takes the return address from the request", async () => {
    const person = personOf();
    const start = await fetch(
      `${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}&redirect=https://evil.test/&returnTo=https://evil.test/`,
      { redirect: "manual" },
    );
    expect(start.status).toBe(302);
    const session = await signIn(tenant, person);
    expect(session.redirectedTo.startsWith(`${tenant.app.baseUrl}/`)).toBe(true);
    const cli = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, person, {
      callbackPort: 45678,
      callbackState: "a-one-time-state-0123456789",
    });
    const back = await finishAtKeyward(cli.callbackUrl, cli.keyward);
    expect(back.headers.get("location")).toBe(
      `${tenant.app.baseUrl}/login/cli?callback_port=45678&callback_state=a-one-time-state-0123456789`,
    );
    const badState = await fetch(
      `${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}&callbackPort=1234&callbackState=<script>`,
      { redirect: "manual" },
    );
    expect(badState.status).toBe(400);
  });

  it("hands the command line a session of its own, which outlives the console's sign-out", async () => {
    const person = personOf();
    const consoleSession = await signIn(tenant, person);
    const handoff = await fetch(`${tenant.app.baseUrl}/api/v1/auth/cli-session`, {
      method: "POST",
      headers: { cookie: consoleSession.jar.header() },
    });
    expect(handoff.status).toBe(200);
    // The hand-off spent the console's refresh token and answered the next one as the cookie.
    consoleSession.jar.take(handoff);
    const cli = (await handoff.json()) as { email: string; accessToken: string; refreshToken: string };
    expect(cli.email).toBe(person.email);
    expect(cli.refreshToken).toMatch(/^kwr_/);
    expect((await refresh(tenant.app.baseUrl, consoleSession.jar)).status).toBe(200);
    await fetch(`${tenant.app.baseUrl}/api/v1/auth/logout`, {
      method: "POST",
      headers: { cookie: consoleSession.jar.header() },
    });
    expect((await tenant.app.client(cli.accessToken).users.me()).status).toBe(200);
    // The command line renews with its refresh token as the `jid` cookie, the way the console does.
    const cliJar = new CookieJar();
    cliJar.set("jid", cli.refreshToken);
    expect((await refresh(tenant.app.baseUrl, cliJar)).status).toBe(200);
    // Without a live console session there is nothing to hand off.
    const none = await fetch(`${tenant.app.baseUrl}/api/v1/auth/cli-session`, {
      method: "POST",
      headers: { cookie: consoleSession.jar.header() },
    });
    expect(none.status).toBe(401);
  });

  it("answers 404 for an organization without single sign-on", async () => {
    const other = await createTenant();
    const start = await fetch(`${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${other.orgSlug}`, {
      redirect: "manual",
    });
    expect(start.status).toBe(404);
    // A browser is sent back to the console's sign-in page with the reason instead.
    const browser = await fetch(`${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${other.orgSlug}`, {
      redirect: "manual",
      headers: { accept: "text/html,application/xhtml+xml" },
    });
    expect(browser.status).toBe(302);
    const to = new URL(browser.headers.get("location")!);
    expect(to.origin + to.pathname).toBe(`${tenant.app.baseUrl}/login`);
    expect(to.searchParams.get("org")).toBe(other.orgSlug);
    expect(to.searchParams.get("sso_error")).toMatch(/not configured/);
  });

  it("makes the bootstrap e-mail the first organization's admin person once single sign-on is on", async () => {
    const app = await startTestApp();
    try {
      const root = rootTenantOf(app);
      await configureSso(root);
      const admin = await signIn(root, { sub: "the-first-admin", email: app.bootstrap.user.email });
      const { user } = expectOk(await admin.client.users.me());
      expect(user.id).toBe(app.bootstrap.user.id);
      const people = expectOk(await admin.client.users.listOrgMemberships({ params: { orgId: root.orgId } })).users;
      expect(people.find((m) => m.user?.id === user.id)).toMatchObject({ role: "admin", status: "accepted" });
    } finally {
      await app.close();
    }
  });
});
