import { expect } from "vitest";
import { uniqueName, type Tenant } from "../helpers/tenant";
import { CookieJar, refresh, signIn } from "../sso/sso-helpers";

export { CookieJar, refresh, signIn };

export const newPerson = () => {
  const email = `${uniqueName("person")}@example.test`;
  return { sub: `sub-${email}`, email };
};

/** What the console's /login/cli page does: a session for the command line from the console's cookie. */
export const cliSession = (baseUrl: string, jar: CookieJar) =>
  fetch(`${baseUrl}/api/v1/auth/cli-session`, { method: "POST", headers: { cookie: jar.header() } }).then(
    (response) => {
      jar.take(response);
      return response;
    },
  );

export type CliTokens = { email: string; accessToken: string; refreshToken: string; expiresIn: number };

/** A session for the command line that must be granted; the jar holds the console's next cookie. */
export const grantedCliSession = async (baseUrl: string, jar: CookieJar) => {
  const response = await cliSession(baseUrl, jar);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as CliTokens;
};

/** A jar holding just this refresh token, as the command line sends it (`jid`). */
export const jarWith = (refreshToken: string) => {
  const jar = new CookieJar();
  jar.set("jid", refreshToken);
  return jar;
};

/** Whether a session's access token and refresh token still work (a live refresh rotates the jar's token). */
export const sessionWorks = async (tenant: Tenant, accessToken: string, jar: CookieJar) => {
  const checked = await tenant.app.client(accessToken).sessions.checkAuth();
  const renewed = await refresh(tenant.app.baseUrl, jar);
  return { access: checked.status, refresh: renewed.status };
};

/** A signed-in person's console: its access token, the jar with its `jid`, and the person. */
export const signedInConsole = async (tenant: Tenant) => {
  const person = newPerson();
  return { ...(await signIn(tenant, person)), person };
};
