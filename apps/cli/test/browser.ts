import { expect, inject } from "vitest";
import { admin, url } from "./helpers";
import { authorizeFrom, location, step, type CookieJar, type Person } from "../../server/test/sso/browser-trip";

export type { Person };

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

/**
 * The browser's trip from the sign-in address `keyward login` printed: Keyward's login route, the
 * provider's sign-in form, Keyward's callback. Answers the console page it lands on and the jar
 * holding the console's `jid` cookie.
 */
export const signInInBrowser = async (signInUrl: string, person: Person) => {
  const { callbackUrl, keyward } = await authorizeFrom(signInUrl, url(), person);
  const back = await step(keyward, callbackUrl);
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
