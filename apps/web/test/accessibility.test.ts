import { createRequire } from "node:module";
import { createKeywardClient, ok } from "@keyward/client";
import type { AxeResults } from "axe-core";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserPerTest, signInWithToken } from "./browser";
import { testContext } from "./context";

const { baseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });
const ui = browserPerTest(browserEndpoint);

/** axe-core's browser build; loaded as an init script, which the page's content security policy does not govern. */
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** Every screen of the console, each project type's tabs included. */
const pages = (kmsProjectId: string, sshProjectId: string) => {
  const project = `/projects/${seeded.projectId}`;
  return [
    "/",
    ...[
      "secrets?env=dev&path=/",
      "overview",
      "history?env=dev&path=/",
      "change-requests",
      "access-requests",
      "access",
      "dynamic",
      "syncs",
      "rotations",
      "environments",
      "people",
    ].map((tab) => `${project}/${tab}`),
    `/projects/${kmsProjectId}/keys`,
    `/projects/${sshProjectId}/ssh`,
    "/approvals",
    "/organization",
    "/organization/sso",
    "/identities",
    "/groups",
    "/certificates",
    "/app-connections",
    "/audit-log",
    "/audit-log/streams",
    "/no-such-page",
  ];
};

/** The serious and critical findings of axe on the page as it is now, one line each. */
const seriousViolations = async (page: Page, where: string) => {
  const results = await page.evaluate(async () => {
    type Axe = { run: (context: Document, options: { resultTypes: string[] }) => Promise<AxeResults> };
    // Every rule still runs; only the violations are described node by node (and sent back).
    return (window as unknown as { axe: Axe }).axe.run(document, { resultTypes: ["violations"] });
  });
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${where}: ${violation.id} (${violation.impact}) at ${violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(" "))
          .join(", ")}`,
    );
};

/**
 * Each page's axe findings at this width, and whether the page itself scrolls sideways (it never may:
 * a wide table scrolls in its own box).
 */
const visitAll = async (page: Page, paths: string[], width: number) => {
  const found: string[] = [];
  for (const path of paths) {
    // Inside the signed-in page, as its own links navigate (a reload would sign in again for each page).
    await page.evaluate((to) => {
      window.history.pushState(null, "", to);
      window.dispatchEvent(new PopStateEvent("popstate"));
    }, path);
    await page.locator("main h1, main .crumbs").first().waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll("[role=status]")].every((status) => !status.textContent?.startsWith("Loading")),
    );
    found.push(...(await seriousViolations(page, `${path} at ${width}px`)));
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    if (scrollWidth > width) found.push(`${path} at ${width}px: the page is ${scrollWidth}px wide`);
  }
  return found;
};

describe("accessibility (axe-core)", () => {
  let paths: string[] = [];
  beforeAll(async () => {
    const kms = await ok(admin.projects.create({ body: { projectName: "Axe KMS", type: "kms" } }));
    const ssh = await ok(admin.projects.create({ body: { projectName: "Axe SSH", type: "ssh" } }));
    paths = pages(kms.project.id, ssh.project.id);
  });

  it.each([
    { width: 1280, colorScheme: "light" },
    { width: 375, colorScheme: "light" },
    { width: 1280, colorScheme: "dark" },
    { width: 375, colorScheme: "dark" },
  ] as const)(
    "finds no serious or critical violation and no sideways scroll on any page $width px wide, $colorScheme",
    async ({ width, colorScheme }) => {
      await ui.context.addInitScript({ path: AXE });
      await ui.page.setViewportSize({ width, height: width < 500 ? 740 : 800 });
      await ui.page.emulateMedia({ colorScheme });
      await ui.page.goto(`${baseUrl}/`);
      await ui.page.getByRole("heading", { name: "Sign in" }).first().waitFor();
      const found = await seriousViolations(ui.page, `sign-in at ${width}px`);
      await signInWithToken(ui.page, baseUrl, seeded.token);
      found.push(...(await visitAll(ui.page, paths, width)));
      expect(found).toEqual([]);
      expect(ui.watcher.unexpected([404])).toEqual([]);
    },
    240_000,
  );
});

describe("the first load", () => {
  it("downloads at most 300 KB of JavaScript, compressed", async () => {
    const encodings = new Map<string, string | undefined>();
    ui.page.on("response", (response) => {
      if (response.request().resourceType() === "script")
        encodings.set(response.url(), response.headers()["content-encoding"]);
    });
    await ui.page.goto(`${baseUrl}/`);
    await ui.page.getByRole("heading", { name: "Sign in" }).first().waitFor();
    await ui.page.waitForLoadState("networkidle");
    const scripts = await ui.page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .map((entry) => entry as PerformanceResourceTiming)
        .filter((entry) => entry.name.endsWith(".js"))
        .map((entry) => ({ url: entry.name, sent: entry.encodedBodySize, size: entry.decodedBodySize })),
    );
    expect(scripts.length).toBeGreaterThan(0);
    expect([...encodings.keys()].sort()).toEqual(scripts.map((script) => script.url).sort());
    // Every script the build found worth compressing (1 KiB or more) arrives as brotli.
    const plain = scripts.filter((script) => script.size >= 1024 && encodings.get(script.url) !== "br");
    expect(plain).toEqual([]);
    const sent = scripts.reduce((sum, script) => sum + script.sent, 0);
    expect(sent).toBeLessThanOrEqual(300 * 1024);
    expect(sent).toBeLessThan(scripts.reduce((sum, script) => sum + script.size, 0) / 2);
  });
});
