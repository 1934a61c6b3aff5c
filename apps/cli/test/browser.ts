import { expect, inject } from "vitest";
import { admin, url } from "./helpers";

/** Cookies by name, as a browser keeps them for one site (paths and expiry are not needed here). */
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
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const location = (response: Response) => {
  const to = response.headers.get("location");
  if (!to) throw new Error(`expected a redirect, got ${response.status}: ${response.statusText}`);
  return to;
};

/** One request without following redirects, cookies from and into the jar. */
const step = async (jar: CookieJar, address: string, init: RequestInit = {}) => {
  const response = await fetch(address, {
    ...init,
    redirect: "manual",
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.take(response);
  return response;
};

/** Single sign-on for the CLI tests' organization through the test provider (once per test file). */
export const configureSso = async () => {
  const registered = await fetch(`${inject("oidcIssuer")}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [`${url()}/api/v1/sso/oidc/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }),
  });
  expect(registered.status).toBe(201);
  const client = (await registered.json()) as { client_id: string; client_secret: string };
  const response = await admin().sso.createOidcConfig({
    body: {
      organizationId: inject("orgId"),
      configurationType: "discoveryURL",
      discoveryURL: inject("oidcIssuer"),
      clientId: client.client_id,
      clientSecret: client.client_secret,
      isActive: true,
      allowedEmailDomains: "",
    },
  });
  // Another test file of the run may have configured it already.
  if (response.status !== 200) {
    const current = await admin().sso.getOidcConfig({ query: { organizationId: inject("orgId") } });
    expect(current.status, JSON.stringify(response.body)).toBe(200);
  }
};

export type Person = { sub: string; email: string };

/**
 * The browser's trip from the sign-in address `keyward login` printed: Keyward's login route, the
 * provider's sign-in form, Keyward's callback. Answers the console page it lands on and the jar
 * holding the console's `jid` cookie.
 */
export const signInInBrowser = async (signInUrl: string, person: Person) => {
  const keyward = new CookieJar();
  const provider = new CookieJar();
  const start = await step(keyward, signInUrl);
  expect(start.status, await start.clone().text()).toBe(302);
  let address = location(start);
  let response = await step(provider, address);
  address = new URL(location(response), address).toString();
  const form = new URLSearchParams({ sub: person.sub, email: person.email, email_verified: "true" });
  response = await step(provider, address, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  for (let hops = 0; hops < 5; hops++) {
    address = new URL(location(response), address).toString();
    if (address.startsWith(url())) break;
    response = await step(provider, address);
  }
  expect(address.startsWith(`${url()}/api/v1/sso/oidc/callback?`)).toBe(true);
  const back = await step(keyward, address);
  expect(back.status, await back.clone().text()).toBe(302);
  return { landing: new URL(location(back), url()), jar: keyward };
};

/** What the console's /login/cli page does first: a separate session for the command line. */
export const cliSession = async (jar: CookieJar) => {
  const response = await step(jar, `${url()}/api/v1/auth/cli-session`, { method: "POST" });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { email: string; accessToken: string; refreshToken: string; expiresIn: number };
};

/** The JSON the console hands the command line (Infisical's field names). */
export const handoffJson = (session: { email: string; accessToken: string; refreshToken: string }, state?: string) => ({
  email: session.email,
  privateKey: "",
  JTWToken: session.accessToken,
  RefreshToken: session.refreshToken,
  ...(state === undefined ? {} : { state }),
});

/** The console page's POST to the loopback listener, from the console's origin. */
export const postToListener = (port: number, body: unknown, origin = new URL(url()).origin) =>
  fetch(`http://127.0.0.1:${port}/`, {
    method: "POST",
    headers: { "content-type": "application/json", origin },
    body: JSON.stringify(body),
  });
