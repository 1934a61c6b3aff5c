import { describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { LDAP_TEST_USERS } from "../services/slapd";
import { MISSING_UUID, createBareIdentity, createProjectOwnedIdentity, createUnprivileged } from "./helpers";

const ldapEnv = () => ({
  url: process.env.KEYWARD_TEST_LDAP_URL!,
  bindDN: process.env.KEYWARD_TEST_LDAP_BIND_DN!,
  bindPass: process.env.KEYWARD_TEST_LDAP_BIND_PASSWORD!,
  searchBase: process.env.KEYWARD_TEST_LDAP_BASE_DN!,
});

const attachLdap = async (tenant: Tenant, body: Record<string, unknown> = {}, orgRole = "no-access") => {
  const identity = await createBareIdentity(tenant, orgRole);
  const { identityLdapAuth } = expectOk(
    await tenant.admin.ldapAuth.attach({ params: { identityId: identity.id }, body: { ...ldapEnv(), ...body } }),
  );
  return { identity, ldap: identityLdapAuth };
};

const login = (tenant: Tenant, identityId: string, username: string, password: string) =>
  tenant.anonymous.ldapAuth.login({ body: { identityId, username, password } });

describe("LDAP auth configuration", () => {
  it("attaches against the real directory, hides secrets except on GET, updates and deletes", async () => {
    const tenant = await createTenant();
    const { identity, ldap } = await attachLdap(tenant, {
      accessTokenTTL: 300,
      allowedFields: [{ key: "departmentNumber", value: "engineering, sales" }],
    });
    expect(ldap).toMatchObject({
      identityId: identity.id,
      url: ldapEnv().url,
      searchBase: ldapEnv().searchBase,
      searchFilter: "(uid={{username}})",
      allowedFields: [{ key: "departmentNumber", value: "engineering,sales" }],
      templateId: null,
      accessTokenTTL: 300,
      lockoutEnabled: true,
      lockoutThreshold: 3,
      lockoutDurationSeconds: 300,
      lockoutCounterResetSeconds: 30,
    });
    expect(ldap).not.toHaveProperty("bindPass");
    expect(ldap).not.toHaveProperty("bindDN");

    const got = expectOk(await tenant.admin.ldapAuth.get({ params: { identityId: identity.id } })).identityLdapAuth;
    expect(got).toMatchObject({ bindDN: ldapEnv().bindDN, bindPass: ldapEnv().bindPass });

    const stored = await tenant.app.deps.db
      .selectFrom("identity_ldap_auths")
      .select(["encrypted_bind_dn", "encrypted_bind_pass"])
      .where("auth_config_id", "=", ldap.id)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_bind_pass).toMatch(/^v2:\d+:/);
    expect(JSON.stringify(stored)).not.toContain(ldapEnv().bindPass);

    const updated = expectOk(
      await tenant.admin.ldapAuth.update({
        params: { identityId: identity.id },
        body: { searchFilter: "(&(uid={{username}})(objectClass=inetOrgPerson))", lockoutThreshold: 4 },
      }),
    ).identityLdapAuth;
    expect(updated).toMatchObject({
      searchFilter: "(&(uid={{username}})(objectClass=inetOrgPerson))",
      lockoutThreshold: 4,
    });

    const deleted = expectOk(
      await tenant.admin.ldapAuth.revoke({ params: { identityId: identity.id } }),
    ).identityLdapAuth;
    expect(deleted.id).toBe(ldap.id);
    expect(deleted).not.toHaveProperty("bindPass");
    expect(
      expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } })).identity.authMethods,
    ).toEqual([]);
  });

  it("answers the reference's errors", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant);
    const bare = await createBareIdentity(tenant);
    expect(await tenant.admin.ldapAuth.attach({ params: { identityId: identity.id }, body: ldapEnv() })).toMatchObject({
      status: 400,
      body: { message: "Failed to add LDAP Auth to already configured identity" },
    });
    expect(
      await tenant.admin.ldapAuth.attach({
        params: { identityId: bare.id },
        body: { ...ldapEnv(), bindPass: "wrong" },
      }),
    ).toMatchObject({
      status: 400,
      body: {
        message:
          "Failed to connect to LDAP server. Please ensure that the LDAP server is running and your credentials are correct.",
      },
    });
    expect(
      await tenant.admin.ldapAuth.attach({ params: { identityId: bare.id }, body: { ...ldapEnv(), searchBase: " " } }),
    ).toMatchObject({
      status: 400,
      body: { message: "Invalid request. Missing bind DN, bind pass, search base, or URL." },
    });
    expect(
      await tenant.admin.ldapAuth.attach({
        params: { identityId: bare.id },
        body: { ...ldapEnv(), url: "http://127.0.0.1:1" },
      }),
    ).toMatchObject({
      status: 400,
    });
    expect(
      await tenant.admin.ldapAuth.attach({
        params: { identityId: bare.id },
        body: { ...ldapEnv(), url: "ldap://169.254.169.254" },
      }),
    ).toMatchObject({
      status: 400,
      body: { message: "Local IPs not allowed as URL" },
    });
    const badFilter = await tenant.admin.ldapAuth.attach({
      params: { identityId: bare.id },
      body: { ...ldapEnv(), searchFilter: "(uid=" },
    });
    expect(badFilter).toMatchObject({ status: 422, body: { message: [{ message: "Invalid LDAP search filter" }] } });
    expect(
      (
        await tenant.admin.ldapAuth.attach({
          params: { identityId: bare.id },
          body: { ...ldapEnv(), accessTokenMaxTTL: 0 },
        })
      ).status,
    ).toBe(422);
    expect(
      (await tenant.admin.ldapAuth.attach({ params: { identityId: bare.id }, body: { url: "x" } } as never)).status,
    ).toBe(422);

    const notAttached = { status: 400, body: { message: "The identity does not have LDAP Auth attached" } };
    expect(await tenant.admin.ldapAuth.get({ params: { identityId: bare.id } })).toMatchObject(notAttached);
    expect(await tenant.admin.ldapAuth.revoke({ params: { identityId: bare.id } })).toMatchObject(notAttached);
    expect(await tenant.admin.ldapAuth.update({ params: { identityId: bare.id }, body: {} })).toMatchObject({
      ...notAttached,
      status: 404,
    });
    expect(await tenant.admin.ldapAuth.clearLockouts({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have ldap auth" },
    });
    for (const identityId of [MISSING_UUID, "abc"]) {
      expect((await tenant.admin.ldapAuth.revoke({ params: { identityId } })).status).toBe(404);
    }
    const other = await createTenant();
    expect((await other.admin.ldapAuth.get({ params: { identityId: identity.id } })).status).toBe(404);
    expect((await tenant.anonymous.ldapAuth.revoke({ params: { identityId: identity.id } })).status).toBe(401);
  });

  it("refuses callers without permission (403), with the role boundary on revoke", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant);
    const outsider = await createUnprivileged(tenant);
    expect(await outsider.client.ldapAuth.revoke({ params: { identityId: identity.id } })).toMatchObject({
      status: 403,
      body: { error: "PermissionDenied" },
    });
    expect((await outsider.client.ldapAuth.get({ params: { identityId: identity.id } })).status).toBe(403);
    expect((await outsider.client.ldapAuth.update({ params: { identityId: identity.id }, body: {} })).status).toBe(403);
    expect((await outsider.client.ldapAuth.clearLockouts({ params: { identityId: identity.id } })).status).toBe(403);
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    expectOk(await tenant.admin.ldapAuth.attach({ params: { identityId: owned.id }, body: ldapEnv() }));
    const member = await createUnprivileged(tenant, project.id);
    expect(await member.client.ldapAuth.revoke({ params: { identityId: owned.id } })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to revoke-auth on identity" },
    });
  });
});

describe("LDAP login against OpenLDAP", () => {
  it("logs in with a directory password and issues a working token", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant, { accessTokenTTL: 600 }, "member");
    const res = expectOk(await login(tenant, identity.id, "alice", LDAP_TEST_USERS.alice.password));
    expect(res).toMatchObject({ expiresIn: 600, accessTokenMaxTTL: 2_592_000, tokenType: "Bearer" });
    expect(
      (await tenant.app.client(res.accessToken).identities.get({ params: { identityId: identity.id } })).status,
    ).toBe(200);
    const token = await tenant.app.deps.db
      .selectFrom("identity_access_tokens")
      .select("auth_method")
      .where("identity_id", "=", identity.id)
      .executeTakeFirst();
    expect(token?.auth_method).toBe("ldap-auth");
  });

  it("rejects wrong passwords, unknown users and filter injection", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant, { lockoutEnabled: false });
    expect(await login(tenant, identity.id, "alice", "wrong")).toMatchObject({
      status: 401,
      body: { message: "Invalid credentials" },
    });
    expect(await login(tenant, identity.id, "nobody", "x")).toMatchObject({ status: 401 });
    expect(await login(tenant, identity.id, "*", LDAP_TEST_USERS.alice.password)).toMatchObject({ status: 401 });
    expect(await login(tenant, identity.id, "alice)(uid=*", LDAP_TEST_USERS.alice.password)).toMatchObject({
      status: 401,
    });
    expect(await login(tenant, MISSING_UUID, "alice", "x")).toMatchObject({ status: 404 });
    expect((await login(tenant, "not-a-uuid", "alice", "x")).status).toBe(422);
    expect((await login(tenant, identity.id, "alice", "  ")).status).toBe(422);
  });

  it("templates the search filter and enforces allowed fields", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant, {
      searchFilter: "(&(objectClass=inetOrgPerson)(uid={{username}}))",
      allowedFields: [
        { key: "departmentNumber", value: "engineering" },
        { key: "employeeType", value: "staff,intern" },
      ],
      lockoutEnabled: false,
    });
    expect((await login(tenant, identity.id, "alice", LDAP_TEST_USERS.alice.password)).status).toBe(200);
    expect(await login(tenant, identity.id, "bob", LDAP_TEST_USERS.bob.password)).toMatchObject({
      status: 401,
      body: { message: "Invalid credentials" },
    });
    expect((await login(tenant, identity.id, "erin", LDAP_TEST_USERS.erin.password)).status).toBe(401);
  });

  it("locks a username out after the threshold, shows it on the identity, and clears it", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant, { lockoutThreshold: 2, lockoutDurationSeconds: 30 });
    expect((await login(tenant, identity.id, "carol", "bad-1")).status).toBe(401);
    expect((await login(tenant, identity.id, "carol", "bad-2")).status).toBe(401);
    expect(await login(tenant, identity.id, "carol", LDAP_TEST_USERS.carol.password)).toMatchObject({
      status: 401,
      body: { message: "This identity auth method is temporarily locked, please try again later" },
    });
    expect((await login(tenant, identity.id, "dave", LDAP_TEST_USERS.dave.password)).status).toBe(200);
    const details = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(details.identity.activeLockoutAuthMethods).toEqual(["ldap-auth"]);
    expect(expectOk(await tenant.admin.ldapAuth.clearLockouts({ params: { identityId: identity.id } }))).toEqual({
      deleted: 1,
    });
    expect((await login(tenant, identity.id, "carol", LDAP_TEST_USERS.carol.password)).status).toBe(200);
  });

  it("a successful login clears the failure count", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant, { lockoutThreshold: 2, lockoutCounterResetSeconds: 5 });
    expect((await login(tenant, identity.id, "dave", "bad")).status).toBe(401);
    expect((await login(tenant, identity.id, "dave", LDAP_TEST_USERS.dave.password)).status).toBe(200);
    expect((await login(tenant, identity.id, "dave", "bad")).status).toBe(401);
    expect((await login(tenant, identity.id, "dave", LDAP_TEST_USERS.dave.password)).status).toBe(200);
  });

  it("deleting the method ends its tokens at once", async () => {
    const tenant = await createTenant();
    const { identity } = await attachLdap(tenant);
    const { accessToken } = expectOk(await login(tenant, identity.id, "alice", LDAP_TEST_USERS.alice.password));
    expectOk(await tenant.admin.ldapAuth.revoke({ params: { identityId: identity.id } }));
    const res = await tenant.app.client(accessToken).identities.get({ params: { identityId: identity.id } });
    expect(res).toMatchObject({ status: 401 });
  });
});
