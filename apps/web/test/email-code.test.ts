import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createKeywardClient, ok } from "@keyward/client";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectBrowser, openPageIn, screenshot, signInAtProvider, signInWithSso, type Person } from "./browser";
import { testContext } from "./context";
import { organizationWithSso } from "./sso-organization";

const { baseUrl, browserEndpoint, oidcIssuer, mailDir, seeded } = testContext();
const instanceAdmin = createKeywardClient({ baseUrl, token: seeded.rootToken });
const target = { baseUrl, oidcIssuer, instanceAdmin };

/** Ada belongs to one organization already; the second one's provider vouches for her address too. */
const ada: Person = { sub: "sub-ada-proof", email: "ada@mail.test", givenName: "Ada", familyName: "Lovelace" };

let browser: Browser;
const contexts: BrowserContext[] = [];

const openPage = () => openPageIn(browser, contexts);

/** The eight-digit code of the newest mail to this address. */
const mailedCode = (email: string) => {
  const mails = readdirSync(mailDir)
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    .map((file) => JSON.parse(readFileSync(join(mailDir, file), "utf8")) as { to: string[]; data: string })
    .filter((mail) => mail.to.includes(email));
  // The code stands alone on its indented line; a Message-ID header may hold eight digits too.
  const code = /^ {4}(\d{8})\r?$/m.exec(mails.at(-1)?.data ?? "")?.[1];
  if (!code) throw new Error(`no code was mailed to ${email}`);
  return code;
};

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
});
afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
  await browser?.close();
});

describe("signing in to a second organization with an address another one knows (Chromium)", () => {
  it("asks for the code mailed to the address, refuses a wrong one, and signs in with the right one", async () => {
    const [first, second] = [
      await organizationWithSso(target, "Proof first"),
      await organizationWithSso(target, "Proof second"),
    ];
    const one = await openPage();
    await one.page.goto(`${baseUrl}/login`);
    await signInWithSso(one.page, oidcIssuer, ada, first.slug);

    const { page, watcher } = await openPage();
    await page.goto(`${baseUrl}/login`);
    await page.getByRole("radio", { name: "Single sign-on" }).check();
    await page.getByLabel("Organization").fill(second.slug);
    await page.getByRole("button", { name: "Continue with single sign-on" }).click();
    await signInAtProvider(page, oidcIssuer, { ...ada, sub: "sub-ada-second", givenName: "Eve" });
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    expect(new URL(page.url()).search).toBe(`?org=${second.slug}&sso_verify=email`);
    await screenshot(page, "sign-in-email-code");

    const code = mailedCode(ada.email);
    await page.getByLabel("Code").fill("123");
    await page.getByRole("button", { name: "Continue", exact: true }).click();
    await page.getByText("The code is the eight digits in the e-mail").waitFor();
    await page.getByLabel("Code").fill(code === "00000000" ? "00000001" : "00000000");
    await page.getByRole("button", { name: "Continue", exact: true }).click();
    await page.getByText("The code is not right: 4 tries left").waitFor();

    await page.getByLabel("Code").fill(code);
    await page.getByRole("button", { name: "Continue", exact: true }).click();
    await page.getByRole("banner").getByText(ada.email).waitFor();
    const members = await ok(second.admin.users.listOrgMemberships({ params: { orgId: second.orgId } }));
    expect(members.users.find((m) => m.user?.email === ada.email)?.user).toMatchObject({ firstName: "Eve" });
    const inFirst = await ok(first.admin.users.listOrgMemberships({ params: { orgId: first.orgId } }));
    expect(inFirst.users.find((m) => m.user?.email === ada.email)?.user).toMatchObject({ firstName: "Ada" });
    // Ada's session in the first organization is untouched.
    await one.page.reload();
    await one.page.getByRole("banner").getByText(ada.email).waitFor();
    expect(watcher.unexpected([400])).toEqual([]);
  });
});
