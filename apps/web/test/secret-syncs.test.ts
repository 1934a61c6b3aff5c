import { createKeywardClient, ok } from "@keyward/client";
import { SECRET_SYNC_DESTINATIONS } from "@keyward/contract";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectBrowser, screenshot, signInWithToken, watchErrors } from "./browser";
import { testContext } from "./context";
// The server suite's GitHub Enterprise Server stand-in (Actions secrets of repositories, values sealed as GitHub does).
import { repoScope, startGitHubFake, type GitHubFake } from "../../server/test/services/github-destination";

const { baseUrl, browserEndpoint, seeded, peerCa } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });
const PAT = "ghp_consoleSyncToken0123456789";
const SYNC = "storefront-actions";

let github: GitHubFake;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watcher: ReturnType<typeof watchErrors>;
let emptyProjectId: string;
let projectId: string;
let syncId: string;
let viewerToken: string;

const syncsUrl = (id: string) => `${baseUrl}/projects/${id}/syncs`;
const destination = () => github.repoSecrets("acme", "storefront");

/** An identity that may only read the project (the built-in viewer role), signed in by a token. */
const viewerOf = async (project: string) => {
  const { organizations } = await ok(admin.users.organizations());
  const { identity } = await ok(
    admin.identities.create({ body: { name: "sync-viewer", organizationId: organizations[0]!.id, role: "no-access" } }),
  );
  await ok(admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const issued = await ok(admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: { name: "ui" } }));
  await ok(
    admin.projects.addIdentityMembership({
      params: { projectId: project, identityId: identity.id },
      body: { role: "viewer" },
    }),
  );
  return issued.accessToken;
};

/** The seeded sync's row of the Syncs tab, once it is shown. */
const syncRow = async () => {
  const row = page.getByRole("table", { name: "Secret syncs" }).getByRole("row").filter({ hasText: SYNC });
  await row.waitFor();
  return row;
};

const statusOf = (row: Locator) => row.getByTestId("sync-status");

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
  // GitHub Enterprise Server's Actions secrets on loopback, served with the CA the server trusts;
  // LEGACY_TOKEN was put there by someone else, so a sync must leave it alone.
  github = await startGitHubFake(peerCa, {
    token: PAT,
    repositories: [
      { owner: "acme", repo: "storefront" },
      { owner: "acme", repo: "checkout" },
    ],
  });
  github.seed(repoScope("acme", "storefront"), "LEGACY_TOKEN", "set by hand");
  const empty = await ok(admin.projects.create({ body: { projectName: "Billing jobs", type: "secret-manager" } }));
  emptyProjectId = empty.project.id;
  const { project } = await ok(admin.projects.create({ body: { projectName: "Storefront", type: "secret-manager" } }));
  projectId = project.id;
  await ok(admin.folders.create({ body: { workspaceId: projectId, environment: "dev", path: "/", name: "app" } }));
  const where = { workspaceId: projectId, environment: "dev", secretPath: "/app" };
  for (const [secretName, secretValue] of [
    ["API_URL", "https://api.storefront.internal"],
    ["LEGACY_TOKEN", "from-keyward"],
    ["feature-flag", "on"],
  ] as const)
    await ok(admin.secretsV3.create({ params: { secretName }, body: { ...where, secretValue } }));
  const { appConnection } = await ok(
    admin.appConnections.github.create({
      body: {
        name: "storefront-github",
        method: "pat",
        credentials: { personalAccessToken: PAT, instanceType: "server", host: new URL(github.url).host },
      },
    }),
  );
  const { secretSync } = await ok(
    admin.secretSyncs.github.create({
      body: {
        name: SYNC,
        projectId,
        connectionId: appConnection.id,
        environment: "dev",
        secretPath: "/app",
        isAutoSyncEnabled: false,
        syncOptions: {},
        destinationConfig: { scope: "repository", owner: "acme", repo: "storefront" },
      },
    }),
  );
  syncId = secretSync.id;
  viewerToken = await viewerOf(projectId);
});
afterAll(async () => {
  // The shared server stops calling the stand-in before it goes.
  if (syncId) await admin.secretSyncs.github.delete({ params: { syncId }, query: { removeSecrets: "false" } });
  await browser?.close();
  await github?.close();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  context.setDefaultTimeout(20_000);
  page = await context.newPage();
  watcher = watchErrors(page);
});
afterEach(async () => {
  await context?.close();
});

describe("secret syncs in the console (Chromium)", () => {
  it("explains what a sync is in a project that has none", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(syncsUrl(emptyProjectId));
    const tab = page.getByRole("navigation", { name: "Project sections" }).getByRole("link", { name: "Syncs" });
    expect(await tab.getAttribute("aria-current")).toBe("page");
    const empty = page.getByText("No syncs yet.", { exact: false });
    await empty.waitFor();
    const text = await empty.textContent();
    for (const { name } of Object.values(SECRET_SYNC_DESTINATIONS)) expect(text).toContain(name);
    expect(text).toContain("never touches destination secrets it did not write");
    expect(watcher.unexpected()).toEqual([]);
  });

  it("lists a sync, shows its plan, runs it now, shows a failure with its retry, and removes what it wrote", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(syncsUrl(projectId));
    const row = await syncRow();
    // The name is the row's header; the cells follow it.
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells.slice(0, 6)).toEqual(["GitHub", "dev /app", "storefront-github", "off", "never synced", "—"]);

    // The plan: what the next run would do, and why two names are left alone.
    await row.getByRole("button", { name: "Plan" }).click();
    const plan = page.getByRole("dialog", { name: `Plan of ${SYNC}` });
    await plan.getByRole("region", { name: "Will create" }).getByText("API_URL").waitFor();
    expect(await plan.getByRole("heading", { name: "Will create (1)" }).count()).toBe(1);
    expect(await plan.getByRole("heading", { name: "Will delete (0)" }).count()).toBe(1);
    const skipped = plan.getByRole("region", { name: "Skipped" });
    expect(await skipped.getByRole("heading").textContent()).toBe("Skipped (2)");
    expect((await skipped.getByRole("listitem").allTextContents()).sort()).toEqual([
      "LEGACY_TOKEN — exists at the destination, not written by this sync — left alone",
      "feature-flag — not a valid name there",
    ]);
    await screenshot(page, "secret-sync-plan");
    await plan.getByRole("button", { name: "Close" }).click();
    await plan.waitFor({ state: "detached" });
    expect(destination().has("API_URL")).toBe(false);

    // Sync now: queued, then done; the server's message names what was left alone.
    await row.getByRole("button", { name: "Sync now" }).click();
    await statusOf(row)
      .getByText(/pending|running/)
      .waitFor();
    await statusOf(row).getByText("succeeded").waitFor();
    const synced = await row.getByRole("cell").nth(5).textContent();
    expect(synced).toMatch(/\d{1,2}:\d{2}:\d{2}/);
    expect(await row.getByRole("cell").nth(6).textContent()).toContain("LEGACY_TOKEN");
    expect(destination().get("API_URL")?.value).toBe("https://api.storefront.internal");
    expect(destination().get("LEGACY_TOKEN")?.value).toBe("set by hand");
    await screenshot(page, "secret-syncs");

    // GitHub fails: the run's failure and its next attempt are shown; once it answers again, a run succeeds.
    github.setMode("500");
    await row.getByRole("button", { name: "Sync now" }).click();
    await statusOf(row).getByText("failed").waitFor();
    const message = row.getByRole("cell").nth(6);
    await message.getByText(/Next attempt .*\d{1,2}:\d{2}:\d{2}/).waitFor();
    expect(await message.textContent()).toContain("HTTP 500");
    github.setMode("ok");
    await row.getByRole("button", { name: "Sync now" }).click();
    await statusOf(row).getByText("succeeded").waitFor();
    await message.getByText("Next attempt").waitFor({ state: "detached" });

    // Removal asks first, and takes away only what the sync wrote.
    await row.getByRole("button", { name: "Remove synced secrets" }).click();
    const confirm = page.getByRole("dialog", { name: `Remove synced secrets of ${SYNC}?` });
    await confirm.getByText("Only the secrets this sync wrote to GitHub are removed.", { exact: false }).waitFor();
    await confirm.getByRole("button", { name: "Remove synced secrets" }).click();
    await confirm.waitFor({ state: "detached" });
    await message.getByText("Synced secrets removed").waitFor();
    expect([...destination().keys()]).toEqual(["LEGACY_TOKEN"]);
    expect(watcher.unexpected()).toEqual([]);
  });

  it("shows the server's refusal when a viewer asks for a run", async () => {
    const viewer = createKeywardClient({ baseUrl, token: viewerToken });
    const refused = await viewer.secretSyncs.github.syncSecrets({ params: { syncId } });
    expect(refused.status).toBe(403);
    const reason = (refused.body as { message: string }).message;
    expect(reason).not.toBe("");

    await signInWithToken(page, baseUrl, viewerToken);
    await page.goto(syncsUrl(projectId));
    const row = await syncRow();
    await row.getByRole("button", { name: "Sync now" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(`Not allowed: ${reason}`);
    expect((await statusOf(row).textContent()) ?? "").not.toMatch(/pending|running/);
    expect(watcher.unexpected([403])).toEqual([]);
  });

  it("creates a sync from the console (settings checked first, the first run previewed), and deletes it with what it wrote", async () => {
    const checkout = () => github.repoSecrets("acme", "checkout");
    github.seed(repoScope("acme", "checkout"), "DEPLOY_KEY", "set by hand");
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(syncsUrl(projectId));
    await syncRow();
    await page.getByRole("button", { name: "New sync" }).click();
    const dialog = page.getByRole("dialog", { name: "New sync" });
    await dialog.getByLabel("Name").fill("checkout-actions");
    await dialog.getByLabel("Destination", { exact: true }).selectOption("github");
    expect(await dialog.getByLabel("App connection").inputValue()).not.toBe("");
    await dialog.getByLabel("Folder path").fill("/app");
    // A setting the destination needs is named before anything is sent.
    const settings = dialog.getByLabel("Destination settings (JSON)");
    await settings.fill(JSON.stringify({ scope: "repository", owner: "acme" }));
    await dialog.getByRole("button", { name: "Preview first run" }).click();
    await dialog.getByText("repo: Required").waitFor();
    // The storefront repository already has a sync: the preview says so.
    await settings.fill(JSON.stringify({ scope: "repository", owner: "acme", repo: "storefront" }));
    await dialog.getByRole("button", { name: "Preview first run" }).click();
    await dialog.getByText("Another sync of this organization already writes to this place.").waitFor();
    await settings.fill(JSON.stringify({ scope: "repository", owner: "acme", repo: "checkout" }));
    await dialog.getByRole("button", { name: "Preview first run" }).click();
    await dialog.getByRole("heading", { name: "Will create (2)" }).waitFor();
    expect(await dialog.getByText("Another sync of this organization").count()).toBe(0);
    await screenshot(page, "secret-sync-new");
    expect(await dialog.getByRole("region", { name: "Skipped" }).getByRole("listitem").allTextContents()).toEqual([
      "feature-flag — not a valid name there",
    ]);
    expect(checkout().has("API_URL")).toBe(false);
    await dialog.getByRole("button", { name: "Create sync" }).click();
    await dialog.waitFor({ state: "detached" });

    // Auto-sync is on: the first run is queued at once and pushes the folder; the hand-set secret stays.
    const row = page
      .getByRole("table", { name: "Secret syncs" })
      .getByRole("row")
      .filter({ hasText: "checkout-actions" });
    await statusOf(row).getByText("succeeded").waitFor();
    expect([...checkout().keys()].sort()).toEqual(["API_URL", "DEPLOY_KEY", "LEGACY_TOKEN"]);
    // GitHub cannot show values: nothing to import from it.
    expect(await row.getByRole("button", { name: "Import" }).count()).toBe(0);

    await row.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete sync checkout-actions?" });
    await confirm.getByLabel("Also remove the secrets this sync wrote (only those)").check();
    await confirm.getByRole("button", { name: "Delete sync" }).click();
    await confirm.waitFor({ state: "detached" });
    await row.waitFor({ state: "detached" });
    expect([...checkout().keys()]).toEqual(["DEPLOY_KEY"]);
    const left = await ok(admin.secretSyncs.listAll({ query: { projectId } }));
    expect(left.secretSyncs.map((sync) => sync.name)).toEqual([SYNC]);
    expect(watcher.unexpected()).toEqual([]);
  });
});
