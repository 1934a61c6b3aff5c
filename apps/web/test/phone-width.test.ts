import { describe, expect, it } from "vitest";
import { browserPerTest, signInWithToken } from "./browser";
import { testContext } from "./context";

const { baseUrl, chromium, seeded } = testContext();
const ui = browserPerTest(chromium);

/** Pages a phone opens; at 375 px the page itself never scrolls sideways (a wide table scrolls in its own box). */
const PAGES = [
  "/",
  `/projects/${seeded.projectId}/secrets?env=dev&path=/`,
  `/projects/${seeded.projectId}/overview`,
  `/projects/${seeded.projectId}/access-requests`,
  `/projects/${seeded.projectId}/change-requests`,
  "/identities",
  "/app-connections",
  "/audit-log",
  "/audit-log/streams",
  "/organization",
];

describe("at a phone's width (375 px)", () => {
  it("no page scrolls sideways", async () => {
    await ui.page.setViewportSize({ width: 375, height: 740 });
    await signInWithToken(ui.page, baseUrl, seeded.token);
    const wide: string[] = [];
    for (const path of PAGES) {
      await ui.page.goto(`${baseUrl}${path}`);
      await ui.page.locator("main h1, main .crumbs").first().waitFor();
      await ui.page.waitForLoadState("networkidle");
      const width = await ui.page.evaluate(() => document.documentElement.scrollWidth);
      if (width > 375) wide.push(`${path}: ${width}px`);
    }
    expect(wide).toEqual([]);
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});
