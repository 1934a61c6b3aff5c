import { expect } from "vitest";

/**
 * A browser's side of single sign-on, played over HTTP against Keyward and the test provider:
 * shared by the server's and the command line's tests. Imports nothing of the server.
 */

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

export type Person = {
  sub: string;
  email?: string;
  verified?: boolean;
  givenName?: string;
  familyName?: string;
  groups?: string[];
};

export const location = (response: Response) => {
  const to = response.headers.get("location");
  if (!to) throw new Error(`expected a redirect, got ${response.status}: ${response.statusText}`);
  return to;
};

/** One request without following redirects, cookies from and into the jar. */
export const step = async (jar: CookieJar, url: string, init: RequestInit = {}) => {
  const response = await fetch(url, {
    ...init,
    redirect: "manual",
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.take(response);
  return response;
};

/**
 * From a sign-in address (Keyward's login route) through the provider's authorization endpoint and
 * sign-in form, up to the provider's redirect back to Keyward: answers that callback URL and the
 * browser's Keyward cookies.
 */
export const authorizeFrom = async (signInUrl: string, keywardBase: string, person: Person) => {
  const keyward = new CookieJar();
  const provider = new CookieJar();
  const start = await step(keyward, signInUrl);
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
  if (person.groups) form.set("groups", person.groups.join(","));
  response = await step(provider, url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  // The provider resumes the authorization and redirects back to Keyward's callback.
  for (let hops = 0; hops < 5; hops++) {
    url = new URL(location(response), url).toString();
    if (url.startsWith(keywardBase)) break;
    response = await step(provider, url);
  }
  expect(url.startsWith(`${keywardBase}/api/v1/sso/oidc/callback?`)).toBe(true);
  return { callbackUrl: url, keyward };
};
