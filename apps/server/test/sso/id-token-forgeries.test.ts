import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { startForgedProvider, type Forgery } from "./forged-provider";
import { CookieJar } from "./sso-helpers";

/** Through Keyward's login route, the provider's redirect, and Keyward's callback: the callback's answer. */
const signInThrough = async (tenant: Tenant) => {
  const jar = new CookieJar();
  const start = await fetch(`${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}`, {
    redirect: "manual",
  });
  jar.take(start);
  const atProvider = await fetch(start.headers.get("location")!, { redirect: "manual" });
  const callback = await fetch(atProvider.headers.get("location")!, {
    redirect: "manual",
    headers: { cookie: jar.header() },
  });
  return {
    status: callback.status,
    body: callback.status === 302 ? null : ((await callback.json()) as { message: string }),
  };
};

describe("ID tokens a provider must not be believed on", () => {
  let tenant: Tenant;
  let provider: Awaited<ReturnType<typeof startForgedProvider>>;
  beforeAll(async () => {
    provider = await startForgedProvider();
    tenant = await createTenant();
    expectOk(
      await tenant.admin.sso.createOidcConfig({
        body: {
          organizationId: tenant.orgId,
          configurationType: "discoveryURL",
          discoveryURL: provider.issuer,
          clientId: "keyward-client",
          clientSecret: "keyward-client-secret",
          isActive: true,
        },
      }),
    );
  });
  afterAll(() => provider.close());

  it("signs in when nothing is forged (the control case)", async () => {
    provider.forge("none", "control@example.test");
    expect((await signInThrough(tenant)).status).toBe(302);
  });

  const refused: [Forgery, RegExp][] = [
    ["other-issuer", /unexpected "iss" claim value/],
    ["other-audience", /unexpected "aud" claim value/],
    ["expired", /"exp" claim timestamp check failed/],
    ["alg-none", /not valid/],
    ["other-key", /signature verification failed/],
    ["wrong-nonce", /nonce does not match/],
    ["unverified-email", /not verified/],
  ];
  for (const [forgery, message] of refused) {
    it(`refuses an ID token with ${forgery}`, async () => {
      provider.forge(forgery, `${forgery}@example.test`);
      const answer = await signInThrough(tenant);
      expect(answer.status).toBe(401);
      expect(answer.body!.message).toMatch(message);
      // Nobody was let in: no person with that e-mail joined the organization.
      const people = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
      expect(people.some((m) => m.user?.email === `${forgery}@example.test`)).toBe(false);
    });
  }
});
