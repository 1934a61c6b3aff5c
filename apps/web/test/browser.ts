import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's Chromium, headless; no sandbox because CI runs as root. */
export const launchBrowser = (executablePath: string): Promise<Browser> =>
  chromium.launch({
    executablePath,
    headless: true,
    timeout: 60_000,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });

/**
 * Every console error and uncaught exception of a page. A failed request is logged by Chromium
 * itself ("Failed to load resource"); tests that provoke one on purpose allow exactly that status.
 */
export const watchErrors = (page: Page) => {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
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

export const signInWithToken = async (page: Page, baseUrl: string, token: string) => {
  await page.goto(`${baseUrl}/`);
  await page.getByRole("radio", { name: "Access token" }).check();
  await page.getByLabel("Token", { exact: true }).fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects" }).waitFor();
};
