import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectBrowser, signInWithToken, watchErrors } from "./browser";
import { testContext } from "./context";

const { baseUrl, browserEndpoint, seeded } = testContext();

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
});

describe("secret search in the project view", () => {
  it("finds a key in every environment and links to its folder", async () => {
    const watcher = watchErrors(page);
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(`${baseUrl}/projects/${seeded.projectId}/secrets`);
    await page.getByRole("searchbox", { name: "Search secrets" }).fill("log_");
    await page.getByRole("searchbox", { name: "Search secrets" }).press("Enter");
    const results = page.getByRole("table", { name: "Search results" });
    await results.waitFor();
    const rows = results.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.allInnerTexts()).toEqual([
      expect.stringContaining("LOG_LEVEL"),
      expect.stringContaining("LOG_LEVEL"),
    ]);
    await rows.filter({ hasText: "staging" }).getByRole("link", { name: "/" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("env")).toBe("staging");
    expect(watcher.errors).toEqual([]);
  });
});
