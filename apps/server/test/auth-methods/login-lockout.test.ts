import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { LDAP_TEST_USERS } from "../services/slapd";
import { createBareIdentity } from "./helpers";

const LOCKED = "This identity auth method is temporarily locked, please try again later";
const INVALID = "Invalid credentials";
const PARALLEL = 64;

// Many logins from one address in a short time: the login rate limit is off for this app.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_LOGIN: "0" });
});
afterAll(async () => {
  await app.close();
});

const ldapEnv = () => ({
  url: process.env.KEYWARD_TEST_LDAP_URL!,
  bindDN: process.env.KEYWARD_TEST_LDAP_BIND_DN!,
  bindPass: process.env.KEYWARD_TEST_LDAP_BIND_PASSWORD!,
  searchBase: process.env.KEYWARD_TEST_LDAP_BASE_DN!,
});

const attachUa = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const params = { identityId: identity.id };
  const { identityUniversalAuth } = expectOk(await tenant.admin.universalAuth.attach({ params, body }));
  const { clientSecret } = expectOk(await tenant.admin.universalAuth.createClientSecret({ params, body: {} }));
  const login = (secret: string) =>
    tenant.anonymous.universalAuth.login({ body: { clientId: identityUniversalAuth.clientId, clientSecret: secret } });
  return { identity, clientId: identityUniversalAuth.clientId, clientSecret, login };
};

const attachLdap = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  expectOk(
    await tenant.admin.ldapAuth.attach({ params: { identityId: identity.id }, body: { ...ldapEnv(), ...body } }),
  );
  const login = (username: string, password: string) =>
    tenant.anonymous.ldapAuth.login({ body: { identityId: identity.id, username, password } });
  return { identity, login };
};

const messagesOf = (responses: { status: number; body: unknown }[]) =>
  responses.map((res) => `${res.status} ${(res.body as { message?: string }).message}`);

const failureCount = async (key: string) => {
  const row = await app.deps.db
    .selectFrom("identity_auth_lockouts")
    .select("failed_attempts")
    .where("lockout_key", "=", key.toLowerCase())
    .executeTakeFirst();
  return row?.failed_attempts ?? 0;
};

describe("universal auth lockout", () => {
  it(`${PARALLEL} parallel logins with the right secret all succeed with lockout on`, async () => {
    const tenant = await createTenant(app);
    const { clientId, clientSecret, login } = await attachUa(tenant);
    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => login(clientSecret)));
    expect(messagesOf(responses).filter((m) => !m.startsWith("200"))).toEqual([]);
    expect(await failureCount(clientId)).toBe(0);
  });

  it(`${PARALLEL} parallel wrong secrets lock the client id with the count at the threshold or above`, async () => {
    const tenant = await createTenant(app);
    const { identity, clientId, clientSecret, login } = await attachUa(tenant, { lockoutThreshold: 3 });
    const responses = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => login(`wrong-${i}`)));
    const messages = messagesOf(responses);
    // Each guess is either checked and refused, or refused unchecked because the lock came first.
    expect(messages.filter((m) => m !== `401 ${INVALID}` && m !== `401 ${LOCKED}`)).toEqual([]);
    expect(messages.filter((m) => m === `401 ${INVALID}`).length).toBeGreaterThanOrEqual(3);
    expect(await failureCount(clientId)).toBeGreaterThanOrEqual(3);

    expect(await login(clientSecret)).toMatchObject({ status: 401, body: { message: LOCKED } });
    const details = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(details.identity.activeLockoutAuthMethods).toEqual(["universal-auth"]);
    expect(expectOk(await tenant.admin.universalAuth.clearLockouts({ params: { identityId: identity.id } }))).toEqual({
      deleted: 1,
    });
    expect((await login(clientSecret)).status).toBe(200);
  });

  it("refuses the right secret while locked and accepts it once the lock duration has passed", async () => {
    const tenant = await createTenant(app);
    const { clientId, clientSecret, login } = await attachUa(tenant, {
      lockoutThreshold: 2,
      lockoutDurationSeconds: 30,
      lockoutCounterResetSeconds: 600,
    });
    expect(await login("wrong-1")).toMatchObject({ status: 401, body: { message: INVALID } });
    expect(await login("wrong-2")).toMatchObject({ status: 401, body: { message: INVALID } });
    expect(await login(clientSecret)).toMatchObject({ status: 401, body: { message: LOCKED } });
    expect(await login("wrong-3")).toMatchObject({ status: 401, body: { message: LOCKED } });
    expect(await failureCount(clientId)).toBe(2);

    const realNow = app.deps.clock.now;
    app.deps.clock.now = () => realNow() + 31_000;
    try {
      expect((await login(clientSecret)).status).toBe(200);
      expect(await failureCount(clientId)).toBe(0);
      // The count starts over: one failure after the lock does not lock again.
      expect(await login("wrong-4")).toMatchObject({ status: 401, body: { message: INVALID } });
      expect((await login(clientSecret)).status).toBe(200);
    } finally {
      app.deps.clock.now = realNow;
    }
  });

  it("a right secret clears the failure count, so failures only lock when they come in a row", async () => {
    const tenant = await createTenant(app);
    const { login, clientSecret } = await attachUa(tenant, { lockoutThreshold: 2 });
    for (let round = 0; round < 3; round += 1) {
      expect(await login(`wrong-${round}`)).toMatchObject({ status: 401, body: { message: INVALID } });
      expect((await login(clientSecret)).status).toBe(200);
    }
  });
});

describe("LDAP auth lockout", () => {
  it(`${PARALLEL} parallel logins with the right password all succeed with lockout on`, async () => {
    const tenant = await createTenant(app);
    const { login } = await attachLdap(tenant);
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, () => login("alice", LDAP_TEST_USERS.alice.password)),
    );
    expect(messagesOf(responses).filter((m) => !m.startsWith("200"))).toEqual([]);
  });

  it("parallel wrong passwords lock the username; its right password is then refused", async () => {
    const tenant = await createTenant(app);
    const { login } = await attachLdap(tenant, { lockoutThreshold: 2, lockoutDurationSeconds: 60 });
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => login("erin", `wrong-${i}`)));
    const messages = messagesOf(responses);
    expect(messages.filter((m) => m !== `401 ${INVALID}` && m !== `401 ${LOCKED}`)).toEqual([]);
    expect(await failureCount("erin")).toBeGreaterThanOrEqual(2);
    expect(await login("erin", LDAP_TEST_USERS.erin.password)).toMatchObject({
      status: 401,
      body: { message: LOCKED },
    });
    // The lock is per username.
    expect((await login("dave", LDAP_TEST_USERS.dave.password)).status).toBe(200);
  });
});
