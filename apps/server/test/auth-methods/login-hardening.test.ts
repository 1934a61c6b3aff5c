import { describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { LDAP_TEST_USERS } from "../services/slapd";
import { createBareIdentity } from "./helpers";

const ldapEnv = () => ({
  url: process.env.KEYWARD_TEST_LDAP_URL!,
  bindDN: process.env.KEYWARD_TEST_LDAP_BIND_DN!,
  bindPass: process.env.KEYWARD_TEST_LDAP_BIND_PASSWORD!,
  searchBase: process.env.KEYWARD_TEST_LDAP_BASE_DN!,
});

const attachLdap = async (tenant: Tenant, body: Record<string, unknown>) => {
  const identity = await createBareIdentity(tenant);
  expectOk(
    await tenant.admin.ldapAuth.attach({ params: { identityId: identity.id }, body: { ...ldapEnv(), ...body } }),
  );
  return identity;
};

describe("LDAP search filter templating", () => {
  it("inserts the username as literal text: `$` sequences are not replacement patterns", async () => {
    const tenant = await createTenant();
    const identity = await attachLdap(tenant, { lockoutEnabled: false });
    const login = (username: string) =>
      tenant.anonymous.ldapAuth.login({
        body: { identityId: identity.id, username, password: LDAP_TEST_USERS.alice.password },
      });
    // "$'" would have pulled the rest of the template (")") into the filter: "(uid=alice))".
    for (const username of ["alice$'", "$`alice", "alice$&", "ali$$ce"]) {
      expect(await login(username), username).toMatchObject({ status: 401, body: { message: "Invalid credentials" } });
    }
    expect((await login("alice")).status).toBe(200);
  });
});

describe("OIDC bound patterns", () => {
  it("refuses glob patterns that backtrack (422), as permission $glob does", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    const params = { identityId: identity.id };
    const base = {
      oidcDiscoveryUrl: "https://idp.example.com",
      boundIssuer: "https://idp.example.com",
      boundClaims: {},
    };
    const slow = "*a*a*a*a*a*a*a*b";
    for (const body of [
      { boundSubject: slow },
      { boundAudiences: `ok, ${slow}` },
      { boundClaims: { sub: slow } },
      { boundSubject: "**/**/**/x" },
    ]) {
      const res = await tenant.admin.oidcAuth.attach({ params, body: { ...base, ...body } });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ error: "ValidationFailure" });
    }
    expect((await tenant.admin.oidcAuth.update({ params, body: { boundSubject: slow } })).status).toBe(422);
  });
});
