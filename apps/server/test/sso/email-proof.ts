import { expect } from "vitest";
import type { Received } from "../helpers/smtp-sink";
import type { Tenant } from "../helpers/tenant";
import { location, step, type CookieJar, type Person } from "./browser-trip";
import { authorizeAtProvider, finishAtKeyward } from "./sso-helpers";

/**
 * A sign-in through an organization's provider that Keyward answers with a code mailed to the
 * person (they are known to another organization): the browser lands on the console's code page
 * holding the proof cookie, and no session.
 */
export const signInAwaitingCode = async (tenant: Tenant, person: Person) => {
  const { callbackUrl, keyward } = await authorizeAtProvider(tenant.app.baseUrl, tenant.orgSlug, person);
  const back = await finishAtKeyward(callbackUrl, keyward);
  expect(back.status, await back.clone().text()).toBe(302);
  expect(location(back)).toBe(`${tenant.app.baseUrl}/login?org=${tenant.orgSlug}&sso_verify=email`);
  expect(keyward.get("kw_sso_proof")).toMatch(/^[\w-]{43}$/);
  expect(keyward.get("jid")).toBeUndefined();
  return keyward;
};

/** The code of the newest sign-in mail sent to this address. */
export const mailedCode = (received: Received[], email: string) => {
  const mail = received.filter((m) => m.to.includes(email)).at(-1);
  expect(mail, `a sign-in code was mailed to ${email}`).toBeDefined();
  // The code stands alone on its indented line; a Message-ID header may hold eight digits too.
  const code = /^ {4}(\d{8})\r?$/m.exec(mail!.data)?.[1];
  expect(code).toBeDefined();
  return code!;
};

/** The console posting the code with the browser's cookies. */
export const postCode = (tenant: Tenant, jar: CookieJar, code: string) =>
  step(jar, `${tenant.app.baseUrl}/api/v1/sso/oidc/verify-email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
