import { mkdirSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserServer,
  type Download,
  type Page,
} from "playwright-core";

/**
 * The run's one browser (Debian's Chromium headless shell; no sandbox because CI runs as root),
 * launched once by the global setup: each test file connects to it and works in contexts of its own.
 */
export const launchBrowserServer = (executablePath: string): Promise<BrowserServer> =>
  chromium.launchServer({
    executablePath,
    headless: true,
    timeout: 60_000,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });

/** A connection to the run's browser; closing it closes the contexts it opened, not the browser. */
export const connectBrowser = (endpoint: string): Promise<Browser> => chromium.connect(endpoint, { timeout: 60_000 });

/** What the browser downloaded, as text (read through the connection: the file stays on the browser's side). */
export const downloadedText = async (download: Download) => text(await download.createReadStream());

/**
 * Every console error and uncaught exception of a page. A failed request is logged by Chromium
 * itself ("Failed to load resource"); tests that provoke one on purpose allow exactly that status.
 */
export const watchErrors = (page: Page) => {
  const errors: string[] = [];
  page.on("console", (message) => {
    // On load the console asks whether the refresh cookie holds a person's session; without one that is a 401.
    const url = message.location().url;
    const probe = url.endsWith("/api/v1/auth/token") && message.text().includes("status of 401");
    // The test OpenID provider has no icon; Chromium asks for one on its sign-in page.
    const providerIcon = url.endsWith("/favicon.ico");
    if (message.type() === "error" && !probe && !providerIcon) errors.push(`${message.text()} ${url}`.trim());
  });
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  return {
    errors,
    unexpected: (allowedStatuses: number[] = []) =>
      errors.filter(
        (text) =>
          !allowedStatuses.some((status) =>
            text.includes(`Failed to load resource: the server responded with a status of ${status}`),
          ),
      ),
  };
};

/** Screenshots go to KEYWARD_SCREENSHOT_DIR when set (the docs/ images are made this way), else nowhere. */
export const screenshot = async (page: Page, name: string) => {
  const dir = process.env.KEYWARD_SCREENSHOT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
};

export type Person = { sub: string; email: string; givenName?: string; familyName?: string };

/** At the test OpenID provider's sign-in form (the browser was sent there by Keyward): sign in as this person. */
export const signInAtProvider = async (page: Page, issuer: string, person: Person) => {
  await page.waitForURL((url) => url.toString().startsWith(`${issuer}/interaction/`));
  await page.locator('input[name="sub"]').fill(person.sub);
  await page.locator('input[name="email"]').fill(person.email);
  if (person.givenName) await page.locator('input[name="given_name"]').fill(person.givenName);
  if (person.familyName) await page.locator('input[name="family_name"]').fill(person.familyName);
  await page.getByRole("button", { name: "Sign in" }).click();
};

/** Single sign-on from the console's sign-in page, through the provider, back to the signed-in console. */
export const signInWithSso = async (page: Page, issuer: string, person: Person, orgSlug?: string) => {
  await page.getByRole("radio", { name: "Single sign-on" }).check();
  if (orgSlug) await page.getByLabel("Organization").fill(orgSlug);
  await page.getByRole("button", { name: "Continue with single sign-on" }).click();
  await signInAtProvider(page, issuer, person);
  await page.getByRole("banner").getByText(person.email).waitFor();
};

export const signInWithToken = async (page: Page, baseUrl: string, token: string) => {
  await page.goto(`${baseUrl}/`);
  await page.getByRole("radio", { name: "Access token" }).check();
  await page.getByLabel("Token", { exact: true }).fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects" }).waitFor();
};

/** A browser context of its own (its own cookies, at Keyward and at the provider), kept in `contexts` to close. */
export const openPageIn = async (browser: Browser, contexts: BrowserContext[]) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(20_000);
  contexts.push(context);
  const page = await context.newPage();
  return { context, page, watcher: watchErrors(page) };
};

/**
 * A connection to the run's browser for the file, and for each test a fresh context and page
 * (1280×800, 15 s waits) whose console errors are watched: read `ui.page` and `ui.watcher` inside a test.
 */
export const browserPerTest = (endpoint: string) => {
  const ui = {} as { browser: Browser; context: BrowserContext; page: Page; watcher: ReturnType<typeof watchErrors> };
  beforeAll(async () => {
    ui.browser = await connectBrowser(endpoint);
  });
  afterAll(async () => {
    await ui.browser?.close();
  });
  beforeEach(async () => {
    ui.context = await ui.browser.newContext({ viewport: { width: 1280, height: 800 } });
    ui.context.setDefaultTimeout(15_000);
    ui.page = await ui.context.newPage();
    ui.watcher = watchErrors(ui.page);
  });
  afterEach(async () => {
    await ui.context?.close();
  });
  return ui;
};
