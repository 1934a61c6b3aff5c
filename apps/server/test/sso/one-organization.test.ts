import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTestApp, startTestApp, type TestApp } from "../helpers/app";
import { startSmtpSink } from "../helpers/smtp-sink";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { mailedCode, postCode, signInAwaitingCode } from "./email-proof";
import {
  authorizeAtProvider,
  configureSso,
  finishAtKeyward,
  newPerson,
  refresh,
  rootTenantOf,
  signedInPerson,
} from "./sso-helpers";

/** The names an organization shows for a person, by e-mail. */
const namesIn = async (tenant: Tenant, email: string) => {
  const member = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users.find(
    (m) => m.user?.email === email,
  );
  return member?.user ? `${member.user.firstName} ${member.user.lastName}` : undefined;
};

describe("an organization's sign-in reaches that organization only", () => {
  let v: Tenant;
  let x: Tenant;
  beforeAll(async () => {
    [v, x] = await Promise.all([createTenant(), createTenant()]);
    await Promise.all([configureSso(v), configureSso(x)]);
  });

  it("refuses a provider vouching for a person another organization knows when no code can be mailed", async () => {
    const victim = await signedInPerson(v, newPerson({ givenName: "Ada", familyName: "Lovelace" }));
    const { callbackUrl, keyward } = await authorizeAtProvider(x.app.baseUrl, x.orgSlug, {
      sub: "x-provider-subject",
      email: victim.email,
      givenName: "Eve",
      familyName: "Mallory",
    });
    const back = await finishAtKeyward(callbackUrl, keyward);
    expect(back.status).toBe(403);
    expect(((await back.json()) as { message: string }).message).toBe(
      `Single sign-on failed: ${victim.email} already has a Keyward account in another organization. ` +
        "Linking it to this organization's sign-in needs a code sent to that address, " +
        "and this instance sends no e-mail (SMTP_URL is not set)",
    );
    expect(keyward.get("jid")).toBeUndefined();
    expect(await namesIn(x, victim.email)).toBeUndefined();
    expect(await namesIn(v, victim.email)).toBe("Ada Lovelace");
    expect(expectOk(await victim.client.users.me()).user).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
  });

  it("refuses a provider vouching for the instance admin's e-mail", async () => {
    const app = await getTestApp();
    const { callbackUrl, keyward } = await authorizeAtProvider(x.app.baseUrl, x.orgSlug, {
      sub: "x-claims-the-admin",
      email: app.bootstrap.user.email,
    });
    const back = await finishAtKeyward(callbackUrl, keyward);
    expect(back.status).toBe(403);
    expect(keyward.get("jid")).toBeUndefined();
    const root = expectOk(
      await app.client(app.rootToken).users.listOrgMemberships({
        params: { orgId: app.bootstrap.organization.id },
      }),
    ).users;
    expect(root.some((m) => m.user?.email === app.bootstrap.user.email)).toBe(true);
    expect(await namesIn(x, app.bootstrap.user.email)).toBeUndefined();
  });

  it("links a person of its own organization by e-mail, as before", async () => {
    const person = newPerson();
    const first = await signedInPerson(x, person);
    const relinked = await signedInPerson(x, { ...person, sub: "another-subject-of-x" });
    expect(relinked.user.id).toBe(first.user.id);
  });
});

describe("a person's session never carries instance administration", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("the bootstrap e-mail signs in to its organization as an admin person, not as the instance admin", async () => {
    const root = rootTenantOf(app);
    await configureSso(root);
    const admin = await signedInPerson(root, { sub: "the-first-admin", email: app.bootstrap.user.email });
    expect(expectOk(await admin.client.users.me()).user).toMatchObject({
      id: app.bootstrap.user.id,
      superAdmin: false,
    });
    const create = await admin.client.system.createOrganization({ body: { name: "not-through-a-session" } });
    expect(create.status).toBe(403);
    expect(create.body).toMatchObject({ message: "Only instance admins can create organizations" });
    const organizations = expectOk(await admin.client.users.organizations()).organizations;
    expect(organizations.map((o) => o.id)).toEqual([root.orgId]);
    // The instance admin identity still administers the instance.
    expectOk(await root.admin.system.createOrganization({ body: { name: "through-the-admin-identity" } }));
  });
});

describe("a provider login claiming the e-mail of a person known elsewhere, with a mail server", () => {
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let app: TestApp;
  let v: Tenant;
  let x: Tenant;
  beforeAll(async () => {
    sink = await startSmtpSink();
    app = await startTestApp({
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      SMTP_FROM: "Keyward <keyward@example.test>",
    });
    [v, x] = await Promise.all([createTenant(app), createTenant(app)]);
    await Promise.all([configureSso(v), configureSso(x)]);
  });
  afterAll(async () => {
    await app?.close();
    await sink?.close();
  });

  it("links only with the code mailed to the address; names and sign-outs stay per organization", async () => {
    const ada = await signedInPerson(v, newPerson({ givenName: "Ada", familyName: "Lovelace" }));
    const jar = await signInAwaitingCode(x, {
      sub: "x-ada",
      email: ada.email,
      givenName: "Eve",
      familyName: "Mallory",
    });
    expect(await namesIn(x, ada.email)).toBeUndefined();
    const code = mailedCode(sink.received, ada.email);

    const wrong = await postCode(x, jar, code === "00000000" ? "00000001" : "00000000");
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ statusCode: 400, message: "The code is not right: 4 tries left" });
    const right = await postCode(x, jar, code);
    expect(right.status, await right.clone().text()).toBe(200);
    expect(await right.json()).toEqual({ redirectTo: "/" });
    expect(jar.get("kw_sso_proof")).toBeUndefined();
    const answer = await refresh(x.app.baseUrl, jar);
    expect(answer.status).toBe(200);
    const inX = app.client(((await answer.json()) as { token: string }).token);
    expect(expectOk(await inX.users.me()).user).toMatchObject({
      id: ada.user.id,
      firstName: "Eve",
      lastName: "Mallory",
    });
    expect(expectOk(await ada.client.users.me()).user).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
    expect(await namesIn(x, ada.email)).toBe("Eve Mallory");
    expect(await namesIn(v, ada.email)).toBe("Ada Lovelace");
    // The code is spent.
    expect((await postCode(x, jar, code)).status).toBe(401);

    // Signing out everywhere from X, and X deactivating the person, end X's sessions only.
    expectOk(await inX.users.revokeMySessions());
    expect((await inX.users.me()).status).toBe(401);
    expect((await ada.client.users.me()).status).toBe(200);
    const again = await signedInPerson(x, { sub: "x-ada", email: ada.email });
    expectOk(
      await x.admin.users.updateOrgMembership({
        params: { orgId: x.orgId, membershipId: again.membership.id },
        body: { isActive: false },
      }),
    );
    expect((await again.client.users.me()).status).toBe(401);
    expect((await ada.client.users.me()).status).toBe(200);
    expect((await refresh(v.app.baseUrl, ada.jar)).status).toBe(200);
  });

  it("spends the link after five wrong codes, and refuses a code without the browser that signed in", async () => {
    const grace = await signedInPerson(v, newPerson());
    const jar = await signInAwaitingCode(x, { sub: "x-grace", email: grace.email });
    const code = mailedCode(sink.received, grace.email);
    const wrongCode = code === "99999999" ? "99999998" : "99999999";
    const messages: string[] = [];
    for (let i = 0; i < 5; i++)
      messages.push(((await (await postCode(x, jar, wrongCode)).json()) as { message: string }).message);
    expect(messages).toEqual([
      "The code is not right: 4 tries left",
      "The code is not right: 3 tries left",
      "The code is not right: 2 tries left",
      "The code is not right: 1 try left",
      "The code is not right, and no tries are left: sign in again for a new code",
    ]);
    expect((await postCode(x, jar, code)).status).toBe(401);
    expect(await namesIn(x, grace.email)).toBeUndefined();

    // Through the typed client: no proof cookie is a 401, a code that is not eight digits a 422.
    const noCookie = await x.anonymous.sso.verifyEmailCode({ body: { code } });
    expect(noCookie.status).toBe(401);
    expect(noCookie.body).toMatchObject({
      message: "Single sign-on failed: this sign-in is unknown, expired or already used. Sign in again",
    });
    expect((await x.anonymous.sso.verifyEmailCode({ body: { code: "12ab" } })).status).toBe(422);
  });
});
