import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, type Tenant } from "../helpers/tenant";

const HTML = { accept: "text/html,application/xhtml+xml" };

/** Where a browser refused at the login route is sent: the console's sign-in page and its query. */
const refusedTo = async (url: string) => {
  const answer = await fetch(url, { redirect: "manual", headers: HTML });
  expect(answer.status).toBe(302);
  const to = new URL(answer.headers.get("location")!);
  expect(to.pathname).toBe("/login");
  return Object.fromEntries(to.searchParams);
};

describe("a refused single sign-on begun by a command line", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
  });

  it("sends the browser back to sign-in with the listener's port (and state), so a retry still hands it the session", async () => {
    const login = `${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}`;
    // The organization has no single sign-on: refused, the port kept (either spelling, normalised).
    expect(await refusedTo(`${login}&callback_port=0051234`)).toEqual({
      org: tenant.orgSlug,
      sso_error: expect.stringMatching(/not configured/),
      callback_port: "51234",
    });
    expect(await refusedTo(`${login}&callbackPort=51234&callbackState=a-one-time-state-0123456789`)).toEqual({
      org: tenant.orgSlug,
      sso_error: expect.stringMatching(/not configured/),
      callback_port: "51234",
      callback_state: "a-one-time-state-0123456789",
    });
  });

  it("carries nothing of a malformed listener", async () => {
    const login = `${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}`;
    for (const listener of [
      "callback_port=http://evil.test",
      "callbackPort=70000",
      "callbackPort=1&callbackState=<x>",
    ]) {
      const query = await refusedTo(`${login}&${listener}`);
      expect(Object.keys(query).sort()).toEqual(["org", "sso_error"]);
    }
  });
});
