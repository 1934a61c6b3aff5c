import { expect } from "vitest";
import type { Tenant } from "../helpers/tenant";
import { expectOk } from "../helpers/tenant";

/** Cookies by name, as a browser would keep them for one site (paths and expiry are not needed here). */
export class CookieJar {
  private cookies = new Map<string, string>();
  take(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  get(name: string) {
    return this.cookies.get(name);
  }
  set(name: string, value: string) {
    this.cookies.set(name, value);
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

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

export type Person = { sub: string; email?: string; verified?: boolean; givenName?: string; familyName?: string };

const location = (response: Response) => {
  const to = response.headers.get("location");
  if (!to) throw new Error(`expected a redirect, got ${response.status}: ${response.statusText}`);
  return to;
};

/** One request without following redirects, cookies from and into the jar. */
const step = async (jar: CookieJar, url: string, init: RequestInit = {}) => {
  const response = await fetch(url, {
    ...init,
    redirect: "manual",
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.take(response);
  return response;
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
  const keyward = new CookieJar();
  const provider = new CookieJar();
  const port =
    (options.callbackPort ? `&callbackPort=${options.callbackPort}` : "") +
    (options.callbackState ? `&callbackState=${options.callbackState}` : "");
  const start = await step(keyward, `${baseUrl}/api/v1/sso/oidc/login?orgSlug=${orgSlug}${port}`);
  expect(start.status, await start.clone().text()).toBe(302);
  let url = location(start);
  let response = await step(provider, url);
  // To the sign-in form, then post it.
  url = new URL(location(response), url).toString();
  const form = new URLSearchParams({ sub: person.sub });
  if (person.email) form.set("email", person.email);
  if (person.verified !== false) form.set("email_verified", "true");
  if (person.givenName) form.set("given_name", person.givenName);
  if (person.familyName) form.set("family_name", person.familyName);
  response = await step(provider, url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  // The provider resumes the authorization and redirects back to Keyward's callback.
  for (let hops = 0; hops < 5; hops++) {
    url = new URL(location(response), url).toString();
    if (url.startsWith(baseUrl)) break;
    response = await step(provider, url);
  }
  expect(url.startsWith(`${baseUrl}/api/v1/sso/oidc/callback?`)).toBe(true);
  return { callbackUrl: url, keyward };
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
