import { expect } from "vitest";
import type { TestApp } from "../helpers/app";
import type { Tenant } from "../helpers/tenant";
import { expectOk, uniqueName } from "../helpers/tenant";
import { authorizeFrom, CookieJar, location, step, type Person } from "./browser-trip";

export { CookieJar, type Person };

export const issuer = () => {
  const url = process.env.KEYWARD_TEST_OIDC_ISSUER;
  if (!url) throw new Error("KEYWARD_TEST_OIDC_ISSUER is not set: the test services did not start");
  return url;
};

/** A client registered at the provider (RFC 7591) for this app's callback. */
export const registerClient = async (baseUrl: string) => {
  const response = await fetch(`${issuer()}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [`${baseUrl}/api/v1/sso/oidc/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { client_id: string; client_secret: string };
};

/** Single sign-on for the tenant's organization through the test provider. */
export const configureSso = async (tenant: Tenant, options: { allowedEmailDomains?: string } = {}) => {
  const client = await registerClient(tenant.app.baseUrl);
  return expectOk(
    await tenant.admin.sso.createOidcConfig({
      body: {
        organizationId: tenant.orgId,
        configurationType: "discoveryURL",
        discoveryURL: issuer(),
        clientId: client.client_id,
        clientSecret: client.client_secret,
        isActive: true,
        allowedEmailDomains: options.allowedEmailDomains ?? "",
      },
    }),
  );
};

/**
 * A browser's trip through sign-in up to the provider's redirect back: Keyward's login route,
 * the provider's authorization endpoint, its sign-in form. Answers the callback URL the provider
 * sent the browser to, and the jars of both sites.
 */
export const authorizeAtProvider = async (
  baseUrl: string,
  orgSlug: string,
  person: Person,
  options: { callbackPort?: number; callbackState?: string } = {},
) => {
  const port =
    (options.callbackPort ? `&callbackPort=${options.callbackPort}` : "") +
    (options.callbackState ? `&callbackState=${options.callbackState}` : "");
  return authorizeFrom(`${baseUrl}/api/v1/sso/oidc/login?orgSlug=${orgSlug}${port}`, baseUrl, person);
};

/** Follow the provider's redirect into Keyward's callback with the browser's cookies. */
export const finishAtKeyward = (callbackUrl: string, keyward: CookieJar) => step(keyward, callbackUrl);

/** The console's side: an access token for the session in the refresh cookie. */
export const refresh = (baseUrl: string, jar: CookieJar) =>
  step(jar, `${baseUrl}/api/v1/auth/token`, { method: "POST" });

/** A full sign-in: the session's access token, a client holding it, and the browser's jar with `jid`. */
export const signIn = async (tenant: Tenant, person: Person) => {
  const { callbackUrl, keyward } = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, person);
  const back = await finishAtKeyward(callbackUrl, keyward);
  expect(back.status, await back.clone().text()).toBe(302);
  expect(keyward.get("jid")).toMatch(/^kwr_/);
  const answer = await refresh(tenant.app.baseUrl, keyward);
  expect(answer.status, await answer.clone().text()).toBe(200);
  const { token } = (await answer.json()) as { token: string };
  return { token, client: tenant.app.client(token), jar: keyward, redirectedTo: location(back) };
};

export const newPerson = (names: { givenName?: string; familyName?: string } = {}) => {
  const email = `${uniqueName("person")}@example.test`;
  return { sub: `sub-${email}`, email, ...names };
};

/** A person of the tenant's organization, signed in, with their org membership. */
export const signedInPerson = async (tenant: Tenant, person: Person = newPerson()) => {
  const session = await signIn(tenant, person);
  const { user } = expectOk(await session.client.users.me());
  const membership = expectOk(
    await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } }),
  ).users.find((m) => m.user?.id === user.id)!;
  return { ...session, ...person, email: person.email!, user, membership };
};

/** The organization an app was bootstrapped with, as a tenant whose admin is the instance admin identity. */
export const rootTenantOf = (app: TestApp): Tenant => ({
  app,
  orgId: app.bootstrap.organization.id,
  orgSlug: app.bootstrap.organization.slug,
  adminIdentityId: app.bootstrap.identity.id,
  adminToken: app.rootToken,
  admin: app.client(app.rootToken),
  anonymous: app.client(),
});
