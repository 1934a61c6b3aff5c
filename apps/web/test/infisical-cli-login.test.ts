import { createKeywardClient, ok } from "@keyward/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectBrowser, openPageIn, screenshot, signInAtProvider, type Person } from "./browser";
import { testContext } from "./context";
import { startInfisicalListener } from "./infisical-listener";
import { organizationWithSso } from "./sso-organization";

const { baseUrl, browserEndpoint, oidcIssuer, seeded } = testContext();
const instanceAdmin = createKeywardClient({ baseUrl, token: seeded.rootToken });

const cora: Person = { sub: "sub-cora-cli", email: "cora@infisical-cli.test", givenName: "Cora", familyName: "Cli" };

let browser: Browser;
let orgSlug: string;
const contexts: BrowserContext[] = [];
const listeners: { close: () => void }[] = [];

/** `infisical login`: its listener on 127.0.0.1, for the console's origin (the site it was pointed at). */
const startListener = async () => {
  const listener = await startInfisicalListener(baseUrl);
  listeners.push(listener);
  return listener;
};

/** The console's sign-in form, single sign-on for the organization typed in. */
const continueWithSso = async (page: Page, slug: string) => {
  await page.getByRole("radio", { name: "Single sign-on" }).check();
  await page.getByLabel("Organization").fill(slug);
  await page.getByRole("button", { name: "Continue with single sign-on" }).click();
};

/** The JWT's claims, read without checking it, as the Infisical CLI reads its token's expiry. */
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")) as { exp?: number };

/** The session the listener got is the Infisical CLI's four fields, and works against the API. */
const expectWorkingSession = async (session: Record<string, unknown>) => {
  expect(session).toEqual({
    email: cora.email,
    privateKey: "",
    JTWToken: expect.any(String),
    RefreshToken: expect.any(String),
  });
  const token = session.JTWToken as string;
  expect(claimsOf(token).exp).toBeGreaterThan(Date.now() / 1000);
  const cli = createKeywardClient({ baseUrl, token });
  expect((await ok(cli.users.me())).user.email).toBe(cora.email);
  // How the Infisical CLI checks a pasted token.
  const checked = await fetch(`${baseUrl}/api/v1/auth/checkAuth`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
  expect(checked.status).toBe(200);
  return token;
};

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
  orgSlug = (await organizationWithSso({ baseUrl, oidcIssuer, instanceAdmin }, "Infisical CLI people")).slug;
});
afterAll(async () => {
  listeners.forEach((listener) => listener.close());
  await Promise.all(contexts.map((context) => context.close()));
  await browser?.close();
});

describe("`infisical login` in the browser: /login?callback_port=… (Chromium)", () => {
  let page: Page;
  let context: BrowserContext;
  let firstToken: string;

  it("signs the person in, then POSTs the session to the listener as the Infisical CLI reads it", async () => {
    const listener = await startListener();
    const opened = await openPageIn(browser, contexts);
    ({ page, context } = opened);
    await page.goto(`${baseUrl}/login?callback_port=${listener.port}`);
    await continueWithSso(page, orgSlug);
    await signInAtProvider(page, oidcIssuer, cora);
    await page.getByText("You can return to your terminal").waitFor();

    firstToken = await expectWorkingSession(await listener.session);
    // A CORS preflight from the console's origin, then the JSON POST itself.
    expect(listener.requests.map(({ method, origin }) => ({ method, origin }))).toEqual([
      { method: "OPTIONS", origin: baseUrl },
      { method: "POST", origin: baseUrl },
    ]);
    // The code the Infisical CLI takes pasted is the same session, base64.
    const code = await page.getByLabel("Code to paste into the terminal").inputValue();
    expect(JSON.parse(Buffer.from(code, "base64").toString("utf8"))).toEqual(await listener.session);
    await screenshot(page, "infisical-cli-login");
    expect(opened.watcher.unexpected()).toEqual([]);
  });

  it("hands a person already signed in a new session without signing in again", async () => {
    const listener = await startListener();
    const atProvider: string[] = [];
    context.on("request", (request) => {
      if (request.url().startsWith(oidcIssuer)) atProvider.push(request.url());
    });
    await page.goto(`${baseUrl}/login?callback_port=${listener.port}`);
    await page.getByText("You can return to your terminal").waitFor();
    const token = await expectWorkingSession(await listener.session);
    expect(token).not.toBe(firstToken);
    expect(atProvider).toEqual([]);
    expect(new URL(page.url()).pathname).toBe("/login");
    // The console itself stays signed in.
    await page.goto(`${baseUrl}/login`);
    await page.getByRole("banner").getByText(cora.email).waitFor();
  });

  it("keeps the listener through a refused single sign-on, and hands it the session after the retry", async () => {
    const listener = await startListener();
    const { page: fresh, watcher } = await openPageIn(browser, contexts);
    await fresh.goto(`${baseUrl}/login?callback_port=${listener.port}`);
    await continueWithSso(fresh, "no-such-organization");
    await fresh.getByText("Single sign-on is not configured").waitFor();
    expect(new URL(fresh.url()).searchParams.get("callback_port")).toBe(String(listener.port));
    await continueWithSso(fresh, orgSlug);
    await signInAtProvider(fresh, oidcIssuer, cora);
    await fresh.getByText("You can return to your terminal").waitFor();
    await expectWorkingSession(await listener.session);
    // The refused start is a 404 the browser was redirected from, not a failed load on the page.
    expect(watcher.unexpected()).toEqual([]);
  });
});
