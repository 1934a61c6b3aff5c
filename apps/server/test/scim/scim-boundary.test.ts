import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { startSmtpSink } from "../helpers/smtp-sink";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { mailedCode, postCode, signInAwaitingCode } from "../sso/email-proof";
import { configureSso, newPerson, refresh, signedInPerson } from "../sso/sso-helpers";
import { createScimToken, ERROR_SCHEMA, PATCH_SCHEMA, scim, USER_SCHEMA } from "./scim-helpers";

const memberIn = async (tenant: Tenant, email: string) =>
  expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users.find(
    (m) => m.user?.email === email || m.inviteEmail === email,
  );

const userBody = (email: string, givenName: string, familyName: string) => ({
  schemas: [USER_SCHEMA],
  userName: email,
  name: { givenName, familyName },
  emails: [{ primary: true, value: email }],
  active: true,
});

describe("an organization's SCIM client provisions within its organization", () => {
  let v: Tenant;
  let x: Tenant;
  let xToken: string;
  beforeAll(async () => {
    [v, x] = await Promise.all([createTenant(), createTenant()]);
    await Promise.all([configureSso(v), configureSso(x)]);
    xToken = await createScimToken(x);
  });

  it("cannot claim, rename or sign out a person of another organization", async () => {
    const ada = await signedInPerson(v, newPerson({ givenName: "Ada", familyName: "Lovelace" }));
    const created = await scim(x, xToken, "POST", "/Users", userBody(ada.email, "Eve", "Mallory"));
    expect(created.status).toBe(409);
    expect(created.body).toMatchObject({
      schemas: [ERROR_SCHEMA],
      scimType: "uniqueness",
      detail: `${ada.email} already has a Keyward account in another organization; they join this one by signing in through its single sign-on`,
    });
    expect(await memberIn(x, ada.email)).toBeUndefined();
    expect((await memberIn(v, ada.email))?.user).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
    expect((await ada.client.users.me()).status).toBe(200);
  });

  it("provisions a new person, and names live on the membership", async () => {
    const person = newPerson();
    const created = await scim(x, xToken, "POST", "/Users", userBody(person.email, "Bo", "Provisioned"));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: { givenName: "Bo", familyName: "Provisioned" }, active: true });
    const renamed = await scim(x, xToken, "PATCH", `/Users/${created.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "replace", path: "name.givenName", value: "Bea" }],
    });
    expect(renamed.body.name).toEqual({ givenName: "Bea", familyName: "Provisioned" });
    expect((await memberIn(x, person.email))?.user).toMatchObject({ firstName: "Bea", lastName: "Provisioned" });
  });

  it("does not claim an expired invitation", async () => {
    const person = newPerson();
    expectOk(
      await x.admin.users.inviteToOrg({
        body: { inviteeEmails: [person.email], organizationId: x.orgId, organizationRoleSlug: "admin" },
      }),
    );
    await x.app.deps.db
      .updateTable("org_user_memberships")
      .set({ invite_expires_at: new Date(Date.now() - 60_000) })
      .where("org_id", "=", x.orgId)
      .where("invite_email", "=", person.email)
      .execute();
    const created = await scim(x, xToken, "POST", "/Users", userBody(person.email, "Late", "Comer"));
    expect(created.status).toBe(200);
    const members = expectOk(await x.admin.users.listOrgMemberships({ params: { orgId: x.orgId } })).users;
    expect(members.find((m) => m.id === created.body.id)).toMatchObject({ role: "no-access", status: "accepted" });
    expect(members.find((m) => m.inviteEmail === person.email && m.status === "invited")).toBeDefined();
  });
});

describe("a person in two organizations, deactivated by one's SCIM client", () => {
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let app: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    app = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${sink.port}` });
  });
  afterAll(async () => {
    await app?.close();
    await sink?.close();
  });

  it("keeps their sessions and names in the other organization", async () => {
    const [v, x] = await Promise.all([createTenant(app), createTenant(app)]);
    await Promise.all([configureSso(v), configureSso(x)]);
    const ada = await signedInPerson(v, newPerson({ givenName: "Ada", familyName: "Lovelace" }));
    // Ada joins X herself, proving her address with the mailed code.
    const jar = await signInAwaitingCode(x, { sub: "x-ada", email: ada.email });
    expect((await postCode(x, jar, mailedCode(sink.received, ada.email))).status).toBe(200);
    const inX = app.client(((await (await refresh(app.baseUrl, jar)).json()) as { token: string }).token);
    expect((await inX.users.me()).status).toBe(200);

    const token = await createScimToken(x);
    const provisioned = await scim(x, token, "POST", "/Users", userBody(ada.email, "Eve", "Mallory"));
    expect(provisioned.status).toBe(200);
    const off = await scim(x, token, "PATCH", `/Users/${provisioned.body.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expect(off.body.active).toBe(false);
    expect((await inX.users.me()).status).toBe(401);
    expect(expectOk(await ada.client.users.me()).user).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
    expect((await memberIn(v, ada.email))?.user).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
  });
});
