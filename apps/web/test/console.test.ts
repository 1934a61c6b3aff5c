import { createKeywardClient, ok } from "@keyward/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectBrowser, downloadedText, screenshot, signInWithToken, watchErrors } from "./browser";
import { testContext } from "./context";

const { baseUrl, freshBaseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });
const projectUrl = (tab: string, query = "") => `${baseUrl}/projects/${seeded.projectId}/${tab}${query}`;

let browser: Browser;
let context: BrowserContext;
let page: Page;
let watcher: ReturnType<typeof watchErrors>;

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
  watcher = watchErrors(page);
});
afterEach(async () => {
  await context?.close();
});

describe("web console in Chromium", () => {
  it("signs in with Universal Auth credentials from the keyboard and lists the projects", async () => {
    await page.goto(`${baseUrl}/`);
    const timing = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
      return { domContentLoaded: Math.round(nav?.domContentLoadedEventEnd ?? 0) };
    });
    await screenshot(page, "sign-in");
    await page.getByRole("radio", { name: "Universal Auth" }).check();
    await page.getByLabel("Client ID").fill(seeded.clientId);
    await page.getByLabel("Client secret").fill(seeded.clientSecret);
    await page.getByLabel("Client secret").press("Enter");
    await expect(page.getByRole("heading", { name: "Projects" }).waitFor()).resolves.toBeUndefined();
    await page.getByRole("link", { name: "Payments API" }).waitFor();
    // The header names the identity signed in, not just "Machine identity".
    await page.getByText("console-admin (identity)").waitFor();
    const firstLoad = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .reduce((sum, entry) => sum + (entry as PerformanceResourceTiming).transferSize, 0),
    );
    console.info(
      `first load: DOMContentLoaded ${timing.domContentLoaded} ms; ${Math.round(firstLoad / 1024)} KiB transferred after sign-in`,
    );
    // The token lives in this tab's session storage, not in a cookie the API could be made to trust.
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem("keyward.session"))).toContain("token");
    await screenshot(page, "projects");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("keyward.session"))).toBeNull();
    expect(watcher.unexpected()).toEqual([]);
  });

  it("creates a secret, shows it masked, reveals it, and rolls back an edited secret", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(projectUrl("secrets", "?env=dev&path=/"));
    await page.getByRole("table", { name: "Secrets" }).waitFor();
    await page.getByRole("button", { name: "Add secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Add secret" });
    await dialog.getByLabel("Key").fill("FEATURE_FLAGS");
    await dialog.getByLabel("Value").fill("checkout-v2=true");
    await dialog.getByRole("button", { name: "Create secret" }).click();
    await dialog.waitFor({ state: "detached" });
    const row = page.getByRole("row").filter({ hasText: "FEATURE_FLAGS" });
    await row.waitFor();
    expect(await row.textContent()).not.toContain("checkout-v2=true");
    await row.getByRole("button", { name: "Reveal" }).click();
    await row.getByText("checkout-v2=true").waitFor();

    // STRIPE_KEY was seeded at v1 and edited to v2: roll it back to v1.
    const stripe = page.getByRole("row").filter({ hasText: "STRIPE_KEY" });
    await stripe.getByRole("button", { name: "Versions" }).click();
    const versions = page.getByRole("dialog", { name: "Versions of STRIPE_KEY" });
    await versions.getByRole("button", { name: "Roll back to v1" }).click();
    await versions.getByRole("button", { name: "Reveal v3" }).waitFor();
    await screenshot(page, "secret-versions");
    await versions.getByRole("button", { name: "Close" }).click();
    await stripe.getByRole("button", { name: "Reveal" }).click();
    await stripe.getByText("sk_test_first").waitFor();

    // The staging import is listed with its effect: LOG_LEVEL is overridden by the folder's own secret.
    const imports = page.getByRole("region", { name: "Imports, in order" });
    await imports.getByText("overridden here").waitFor();
    await imports.getByText("SHARED_TOKEN").waitFor();
    await screenshot(page, "secrets");
    expect(watcher.unexpected()).toEqual([]);
  });

  it("pages through a folder of 300 secrets and opens one near its end", async () => {
    const where = { projectId: seeded.projectId, environment: "dev" };
    await ok(
      admin.folders.create({ body: { workspaceId: seeded.projectId, environment: "dev", path: "/", name: "long" } }),
    );
    const keys = Array.from({ length: 300 }, (_, i) => `LONG_${String(i).padStart(3, "0")}`);
    await ok(
      admin.secretsV4.batchCreate({
        body: {
          ...where,
          secretPath: "/long",
          secrets: keys.map((secretKey) => ({ secretKey, secretValue: `v-${secretKey}` })),
        },
      }),
    );
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(projectUrl("secrets", "?env=dev&path=/long"));
    const table = page.getByRole("table", { name: "Secrets" });
    await table.getByRole("rowheader", { name: "LONG_000" }).waitFor();
    // One page of 100 rows (and the header row) is rendered, not the whole folder.
    expect(await table.getByRole("row").count()).toBe(101);
    const pages = page.getByRole("navigation", { name: "Secrets pages" });
    await pages.getByText("Secrets 1–100 of 300").waitFor();
    await pages.getByRole("button", { name: "Next page" }).click();
    await pages.getByRole("button", { name: "Next page" }).click();
    await pages.getByText("Secrets 201–300 of 300").waitFor();
    expect(await pages.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    const row = table.getByRole("row").filter({ hasText: "LONG_297" });
    await row.getByRole("button", { name: "Reveal" }).click();
    await row.getByText("v-LONG_297").waitFor();
    await row.getByRole("button", { name: "Edit", exact: true }).click();
    await page.getByRole("dialog", { name: "Edit LONG_297" }).waitFor();
    expect(watcher.unexpected()).toEqual([]);
  });

  it("shows the server's message when an action fails, and the contract's rule before sending", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(projectUrl("secrets", "?env=dev&path=/"));
    await page.getByRole("table", { name: "Secrets" }).waitFor();
    await page.getByRole("button", { name: "Add secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Add secret" });
    await dialog.getByLabel("Key").fill("not a valid key");
    await dialog.getByLabel("Value").fill("x");
    await dialog.getByRole("button", { name: "Create secret" }).click();
    await dialog.getByText("Secret name can only contain letters, numbers, underscores, dashes and dots").waitFor();

    // A duplicate passes the schema; the server refuses it, and its message is what the console shows.
    const refused = await admin.secretsV3.create({
      params: { secretName: "DATABASE_URL" },
      body: { workspaceId: seeded.projectId, environment: "dev", secretPath: "/", secretValue: "x" },
    });
    expect(refused.status).toBe(400);
    const message = (refused.body as { message: string }).message;
    await dialog.getByLabel("Key").fill("DATABASE_URL");
    await dialog.getByRole("button", { name: "Create secret" }).click();
    await expect(dialog.getByRole("alert").textContent()).resolves.toBe(message);
    await screenshot(page, "error");
    expect(watcher.unexpected([400])).toEqual([]);
  });

  it("grants a temporary privilege and shows it on the timeline beside an expired one", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(projectUrl("access"));
    const form = page.getByRole("form", { name: "Grant a privilege" });
    await form.getByLabel("Identity").selectOption({ label: seeded.botName });
    await form.getByLabel("Slug (optional)").fill("hotfix-access");
    await form.getByLabel("Subject").selectOption("secrets");
    await form.getByLabel("Action").selectOption("read");
    await form.getByLabel("For (e.g. 30m, 1h, 7d)").fill("1h");
    await form.getByRole("button", { name: "Grant" }).click();
    const timeline = page.getByRole("list", { name: "Temporary grants" });
    const granted = timeline.getByRole("listitem").filter({ hasText: "privilege hotfix-access" });
    await granted.waitFor();
    expect(await granted.getAttribute("data-status")).toBe("active");
    const expired = timeline.getByRole("listitem").filter({ hasText: "privilege release-window" });
    expect(await expired.getAttribute("data-status")).toBe("expired");
    await screenshot(page, "access-timeline");
    expect(watcher.unexpected()).toEqual([]);
  });

  it("creates a lease on a dynamic secret and shows it live with its time left", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(projectUrl("dynamic", "?env=dev&secret=orders-db"));
    await page.getByRole("heading", { name: "Leases of orders-db" }).waitFor();
    await page.getByLabel("TTL (optional, e.g. 15m)").fill("10m");
    await page.getByRole("button", { name: "Create lease" }).click();
    await page.getByText("New credentials (shown once)").waitFor();
    const row = page.getByTestId("lease-row").first();
    await row.waitFor();
    const before = await row.getByTestId("time-left").textContent();
    expect(before).toMatch(/^(9m|10m|[0-9]+m [0-9]+s)/);
    // The countdown moves without a reload.
    await page.waitForFunction(
      (initial) => document.querySelector('[data-testid="time-left"]')?.textContent !== initial,
      before,
      { timeout: 5_000 },
    );
    await screenshot(page, "leases");
    expect(watcher.unexpected()).toEqual([]);
  });

  it("sends a revoked session back to sign-in with a message", async () => {
    const login = await ok(
      createKeywardClient({ baseUrl }).universalAuth.login({
        body: { clientId: seeded.clientId, clientSecret: seeded.clientSecret },
      }),
    );
    await signInWithToken(page, baseUrl, login.accessToken);
    await ok(createKeywardClient({ baseUrl }).accessTokens.revoke({ body: { accessToken: login.accessToken } }));
    // On PostgreSQL the server runs several workers: a revocation reaches the others within the
    // one-second token cache bound.
    await page.waitForTimeout(1_100);
    await page.getByRole("link", { name: "Identities" }).click();
    await page.getByText("Your session has expired. Sign in again.").waitFor();
    expect(watcher.unexpected([401])).toEqual([]);
  });

  it("reads the audit log filtered by a picked event type, opens an event's details, exports it, and refuses an inverted time window", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(`${baseUrl}/audit-log`);
    await page.getByRole("table", { name: "Audit events" }).waitFor();
    const filters = page.getByRole("form", { name: "Audit log filters" });
    await filters.getByLabel("Add an event type").selectOption("create-identity-project-additional-privilege");
    expect(await filters.getByLabel("Event types").inputValue()).toBe("create-identity-project-additional-privilege");
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/eventType=create-identity-project-additional-privilege/);
    const table = page.getByRole("table", { name: "Audit events" });
    const rows = table.locator("tbody tr");
    await rows.first().getByText("console-admin").waitFor();
    for (const text of await rows.allTextContents()) {
      expect(text).toContain("create-identity-project-additional-privilege");
      // Times to the second.
      expect(text).toMatch(/\d{1,2}:\d{2}:\d{2}/);
    }
    // A row opens to what the event recorded.
    const details = rows.first().getByRole("button", { name: /^Details/ });
    await details.click();
    expect(await details.getAttribute("aria-expanded")).toBe("true");
    const recorded = table.locator("dl.details");
    await recorded.getByText("privilegeId", { exact: true }).waitFor();
    await recorded
      .getByText(/^actor\./)
      .first()
      .waitFor();
    await screenshot(page, "audit-log");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export as JSON lines" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("audit-log.jsonl");
    const lines = (await downloadedText(download)).trim().split("\n");
    expect(lines.length).toBe(await rows.filter({ has: page.getByRole("button", { name: /^Details/ }) }).count());
    for (const line of lines)
      expect((JSON.parse(line) as { event: { type: string } }).event.type).toBe(
        "create-identity-project-additional-privilege",
      );
    await page
      .getByRole("status")
      .filter({ hasText: `Exported ${lines.length} events.` })
      .waitFor();
    await filters.getByLabel("From", { exact: true }).fill("2026-03-02T10:00");
    await filters.getByLabel("To", { exact: true }).fill("2026-03-01T10:00");
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await filters.getByText("End date cannot be before start date").waitFor();
    expect(watcher.unexpected()).toEqual([]);
  });

  it("lists an identity created inside a project with its project, and manages its client secrets", async () => {
    const { identity } = await ok(
      admin.projectIdentities.create({ params: { projectId: seeded.projectId }, body: { name: "quickstart-app" } }),
    );
    await ok(admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(`${baseUrl}/identities`);
    const row = page.getByRole("row").filter({ has: page.getByRole("button", { name: "quickstart-app" }) });
    await expect(row.getByRole("cell", { name: "Payments API" }).waitFor()).resolves.toBeUndefined();
    await row.getByRole("button", { name: "quickstart-app" }).click();
    await page.getByRole("heading", { name: "Universal Auth client secrets" }).waitFor();
    expect(watcher.unexpected()).toEqual([]);
  });

  it("opens every screen without a console error", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    const screens: [string, string, () => Promise<void>][] = [
      [
        "environments",
        projectUrl("environments"),
        () => page.getByRole("cell", { name: "staging", exact: true }).waitFor(),
      ],
      ["identities", `${baseUrl}/identities`, () => page.getByRole("table", { name: "Identities" }).waitFor()],
      [
        "certificates",
        `${baseUrl}/certificates`,
        () => page.getByRole("img", { name: "Certificates per profile" }).waitFor(),
      ],
      ["groups", `${baseUrl}/groups`, () => page.getByText("Platform team").waitFor()],
    ];
    for (const [name, url, ready] of screens) {
      await page.goto(url);
      await ready();
      await screenshot(page, name);
    }
    await page.goto(`${baseUrl}/identities`);
    await page.getByRole("button", { name: "deploy-bot" }).click();
    await page.getByRole("heading", { name: "Token Auth tokens" }).waitFor();
    await screenshot(page, "identity");
    expect(watcher.unexpected()).toEqual([]);
  });

  it("sets up an instance nobody has set up, shows its token and the organization's slug with copy buttons, and opens on it", async () => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: freshBaseUrl });
    await page.goto(`${freshBaseUrl}/`);
    await page.getByRole("heading", { name: "Set up Keyward" }).waitFor();
    expect(await page.getByRole("button", { name: "Sign in" }).count()).toBe(0);
    await screenshot(page, "set-up");
    await page.getByRole("button", { name: "Set up" }).click();
    await page.getByText("Invalid email").waitFor();
    await page.getByLabel("Organization").fill("First Org");
    await page.getByLabel("Admin e-mail").fill("admin@example.test");
    await page.getByLabel("Organization").press("Enter");
    await page.getByRole("heading", { name: "Keyward is set up" }).waitFor();
    await page.getByRole("alert").getByText("never expires").waitFor();
    await screenshot(page, "set-up-token");
    const token = await page.getByLabel("Instance admin token", { exact: true }).inputValue();
    const who = await ok(createKeywardClient({ baseUrl: freshBaseUrl, token }).system.config());
    expect(who).toEqual({ config: { initialized: true } });
    // The slug single sign-on asks for: the organization's name and a random suffix.
    const slug = await page.getByLabel("Organization slug", { exact: true }).inputValue();
    expect(slug).toMatch(/^first-org-[0-9a-f]{6}$/);
    await page.getByText(`keyward login --org ${slug}`).waitFor();
    expect(await page.getByLabel("Admin e-mail", { exact: true }).inputValue()).toBe("admin@example.test");
    // Each Copy button puts its value on the clipboard and says so.
    for (const [label, value] of [
      ["Instance admin token", token],
      ["Organization slug", slug],
    ] as const) {
      await page.getByRole("button", { name: `Copy ${label.toLowerCase()}` }).click();
      await page.getByRole("status").getByText(`${label} copied.`).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
    }
    await page.getByRole("button", { name: "Continue with this token" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    // Once set up, a new visit gets the sign-in form.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Keyward" }).waitFor();
    expect(await page.getByRole("heading", { name: "Set up Keyward" }).count()).toBe(0);
    expect(watcher.unexpected()).toEqual([]);
  });
});
