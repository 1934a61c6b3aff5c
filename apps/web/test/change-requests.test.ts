import { createKeywardClient, ok } from "@keyward/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectBrowser, screenshot, signInWithToken, watchErrors } from "./browser";
import { testContext } from "./context";

const { baseUrl, browserEndpoint, seeded } = testContext();
// The console acts as the seeded admin identity (console-admin): it commits, approves and merges here.
const admin = createKeywardClient({ baseUrl, token: seeded.token });

let browser: Browser;
let context: BrowserContext;
let page: Page;
let watcher: ReturnType<typeof watchErrors>;
let projectId: string;

const where = () => ({ workspaceId: projectId, environment: "dev", secretPath: "/" });
const requestsUrl = (query = "") => `${baseUrl}/projects/${projectId}/change-requests${query}`;

/** A write through the API into the protected folder: the answer is a change request, not a secret. */
const propose = async (write: Promise<{ status: number; body: unknown }>) => {
  const res = await write;
  expect(res.status).toBe(200);
  const { approval } = res.body as { approval?: { id: string } };
  expect(approval, JSON.stringify(res.body)).toBeDefined();
  return approval!.id;
};

const valueOf = async (key: string) => {
  const res = await admin.secretsV3.get({ params: { secretName: key }, query: where() });
  return res.status === 200 ? res.body.secret.secretValue : res.status;
};

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
  // A project of its own: the protected dev "/" must not change what the other console tests write.
  const { project } = await ok(
    admin.projects.create({ body: { projectName: "Checkout service", type: "secret-manager" } }),
  );
  projectId = project.id;
  await ok(
    admin.secretsV3.create({
      params: { secretName: "API_URL" },
      body: { ...where(), secretValue: "https://api.internal", secretComment: "upstream" },
    }),
  );
  const { organizations } = await ok(admin.users.organizations());
  const { identities } = await ok(
    admin.identities.list({ query: { orgId: organizations[0]!.id, search: "console-admin", offset: 0, limit: 10 } }),
  );
  const me = identities.find((identity) => identity.name === "console-admin");
  expect(me).toBeDefined();
  await ok(
    admin.secretApprovalPolicies.create({
      body: {
        projectId,
        name: "dev-root",
        environment: "dev",
        secretPath: "/",
        approvers: [{ type: "identity", id: me!.id }],
        approvals: 1,
        // The console's identity both commits and approves here.
        allowedSelfApprovals: true,
        enforcementLevel: "hard",
        bypassForMachineIdentities: false,
      },
    }),
  );
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

describe("change requests in the console (Chromium)", () => {
  it("lists a request waiting for me, shows its diff, refuses an early merge, approves and merges it", async () => {
    const requestId = await propose(
      admin.secretsV3.batchUpdate({
        body: {
          ...where(),
          secrets: [{ secretKey: "API_URL", newSecretName: "UPSTREAM_URL", secretValue: "https://api-v2.internal" }],
        },
      }),
    );
    expect(await valueOf("API_URL")).toBe("https://api.internal");

    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(requestsUrl());
    const waiting = page.getByRole("table", { name: "Waiting for my review" });
    const row = waiting.getByRole("row").filter({ hasText: "UPSTREAM_URL" });
    await row.waitFor();
    expect(await row.textContent()).toContain("0 of 1 approvals");
    expect(await row.textContent()).toContain("console-admin");
    await page.getByRole("table", { name: "All change requests" }).getByText("UPSTREAM_URL").waitFor();
    await screenshot(page, "change-requests");

    await row.getByRole("link").click();
    await page.waitForURL(new RegExp(`request=${requestId}`));
    const changes = page.getByRole("table", { name: "Changes" });
    const change = changes.getByRole("row").filter({ hasText: "UPSTREAM_URL" });
    await change.waitFor();
    const text = await change.textContent();
    expect(text).toContain("update");
    expect(text).toContain("API_URL → UPSTREAM_URL");
    expect(text).toContain("https://api-v2.internal");

    // Merging before anyone approved: the server's refusal is shown in the page.
    await page.getByRole("button", { name: "Merge" }).click();
    await page.getByRole("alert").getByText("Doesn't have minimum approvals needed").waitFor();

    const review = page.getByRole("form", { name: "Review" });
    await review.getByLabel("Comment (optional)").fill("looks right");
    await review.getByRole("button", { name: "Approve" }).click();
    const reviews = page.getByRole("list", { name: "Reviews" });
    await reviews.getByText("looks right").waitFor();
    await reviews.getByText("approved").waitFor();
    await page.getByText("1 of 1 approvals").waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    await screenshot(page, "change-request");

    await page.getByRole("button", { name: "Merge" }).click();
    await page
      .getByRole("heading", { name: /Change request/ })
      .getByText("merged")
      .waitFor();
    expect(await page.getByRole("button", { name: "Merge" }).count()).toBe(0);
    expect(await valueOf("UPSTREAM_URL")).toBe("https://api-v2.internal");
    expect(await valueOf("API_URL")).toBe(404);
    const merged = await ok(admin.secretApprovalRequests.get({ params: { requestId } }));
    expect(merged.approval).toMatchObject({ status: "close", hasMerged: true });

    // Merged, it waits for nobody and is listed among the closed ones.
    await page.getByRole("link", { name: "All change requests" }).click();
    await page.getByText("Nothing waits for your review.").waitFor();
    await page.getByLabel("Show").selectOption("close");
    await page.getByRole("table", { name: "All change requests" }).getByText("UPSTREAM_URL").waitFor();
    expect(watcher.unexpected([400])).toEqual([]);
  });

  it("shows a comment-only change as such, and a rejection closes the request without writing", async () => {
    await ok(admin.secretsV3.get({ params: { secretName: "UPSTREAM_URL" }, query: where() }));
    const requestId = await propose(
      admin.secretsV3.update({
        params: { secretName: "UPSTREAM_URL" },
        body: { ...where(), secretComment: "the v2 gateway" },
      }),
    );
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(requestsUrl(`?request=${requestId}`));
    const change = page.getByRole("table", { name: "Changes" }).getByRole("row").filter({ hasText: "UPSTREAM_URL" });
    await change.getByText("comment/tags only").waitFor();
    const review = page.getByRole("form", { name: "Review" });
    await review.getByLabel("Comment (optional)").fill("not now");
    await review.getByRole("button", { name: "Reject" }).click();
    await page
      .getByRole("heading", { name: /Change request/ })
      .getByText("closed")
      .waitFor();
    await page.getByRole("list", { name: "Reviews" }).getByText("not now").waitFor();
    expect(await page.getByRole("form", { name: "Review" }).count()).toBe(0);
    const closed = await ok(admin.secretApprovalRequests.get({ params: { requestId } }));
    expect(closed.approval).toMatchObject({ status: "close", hasMerged: false });
    const secret = await ok(admin.secretsV3.get({ params: { secretName: "UPSTREAM_URL" }, query: where() }));
    expect(secret.secret.secretComment).not.toBe("the v2 gateway");
    expect(watcher.unexpected()).toEqual([]);
  });

  it("says a write from the secrets screen opened a change request instead of writing", async () => {
    await signInWithToken(page, baseUrl, seeded.token);
    await page.goto(`${baseUrl}/projects/${projectId}/secrets?env=dev&path=/`);
    await page.getByRole("table", { name: "Secrets" }).waitFor();
    await page.getByRole("button", { name: "Add secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Add secret" });
    await dialog.getByLabel("Key").fill("RETRY_LIMIT");
    await dialog.getByLabel("Value").fill("5");
    await dialog.getByRole("button", { name: "Create secret" }).click();
    await dialog.waitFor({ state: "detached" });
    const notice = page.getByRole("status").filter({ hasText: "Change request opened — nothing was written yet" });
    await notice.waitFor();
    expect(await page.getByRole("table", { name: "Secrets" }).getByText("RETRY_LIMIT").count()).toBe(0);
    expect(await valueOf("RETRY_LIMIT")).toBe(404);
    await screenshot(page, "change-request-opened");

    // A deletion is proposed the same way.
    page.once("dialog", (confirm) => void confirm.accept());
    const row = page.getByRole("row").filter({ hasText: "UPSTREAM_URL" });
    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("status").filter({ hasText: "Change request opened" }).waitFor();
    await row.waitFor();
    expect(await valueOf("UPSTREAM_URL")).toBe("https://api-v2.internal");

    await notice.getByRole("link", { name: "Open the change request" }).click();
    const change = page.getByRole("table", { name: "Changes" }).getByRole("row").filter({ hasText: "UPSTREAM_URL" });
    await change.getByText("delete", { exact: true }).waitFor();

    // The secret moves on before the deletion is merged: the merge is refused as a conflict, shown in the page.
    const moved = await propose(
      admin.secretsV3.update({ params: { secretName: "UPSTREAM_URL" }, body: { ...where(), secretValue: "v3" } }),
    );
    await ok(admin.secretApprovalRequests.review({ params: { requestId: moved }, body: { status: "approved" } }));
    await ok(admin.secretApprovalRequests.merge({ params: { requestId: moved }, body: {} }));
    await page.getByRole("form", { name: "Review" }).getByRole("button", { name: "Approve" }).click();
    await page.getByText("1 of 1 approvals").waitFor();
    await page.getByRole("button", { name: "Merge" }).click();
    await page.getByRole("alert").getByText("UPSTREAM_URL (the secret changed since", { exact: false }).waitFor();
    expect(await valueOf("UPSTREAM_URL")).toBe("v3");
    expect(watcher.unexpected([400])).toEqual([]);
  });
});
