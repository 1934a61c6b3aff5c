import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createKeywardClient, ok } from "@keyward/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectBrowser,
  openPageIn,
  screenshot,
  signInAtProvider,
  signInWithSso,
  signInWithToken,
  type Person,
} from "./browser";
import { testContext } from "./context";
import { registerAtProvider } from "./sso-organization";

const { baseUrl, browserEndpoint, oidcIssuer, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ada: Person = { sub: "sub-ada", email: "ada@people.test", givenName: "Ada", familyName: "Lovelace" };
const grace: Person = { sub: "sub-grace", email: "grace@people.test", givenName: "Grace", familyName: "Hopper" };
const linus: Person = { sub: "sub-linus", email: "linus@people.test" };

let browser: Browser;
let orgSlug: string;
let orgId: string;
const contexts: BrowserContext[] = [];

/** A browser of its own per person: its own cookies, at Keyward and at the provider. */
const openPage = () => openPageIn(browser, contexts);

const projectCards = (page: Page) => page.locator("ul.grid > li h2").allTextContents();

beforeAll(async () => {
  browser = await connectBrowser(browserEndpoint);
  const { organizations } = await ok(admin.users.organizations());
  orgSlug = organizations[0]!.slug;
  orgId = organizations[0]!.id;
});
afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
  await browser?.close();
});

describe("people in the console (single sign-on in Chromium)", () => {
  let adminPage: Page;
  let adaPage: Page;

  it("lets the admin turn on single sign-on for the organization", async () => {
    const opened = await openPage();
    adminPage = opened.page;
    await signInWithToken(adminPage, baseUrl, seeded.token);
    const client = await registerAtProvider(baseUrl, oidcIssuer);

    await adminPage.getByRole("link", { name: "Organization" }).click();
    await adminPage.getByRole("link", { name: "Single sign-on" }).click();
    const form = adminPage.getByRole("form", { name: "Single sign-on settings" });
    await adminPage.getByText("not configured").waitFor();
    await form.getByLabel("Discovery URL").fill(oidcIssuer);
    await form.getByLabel("Client ID").fill(client.client_id);
    await form.getByLabel("Client secret").fill(client.client_secret);
    await form.getByLabel("Allowed e-mail domains").fill("people.test");
    await form.getByRole("button", { name: "Turn on single sign-on" }).click();
    await adminPage.getByText("Single sign-on settings saved.").waitFor();
    await screenshot(adminPage, "sso-settings");
    // Read back: on, the secret never shown again.
    const saved = adminPage.getByRole("form", { name: "Single sign-on settings" });
    await saved.getByRole("button", { name: "Save settings" }).waitFor();
    expect(await saved.getByLabel("Client secret").inputValue()).toBe("");
    expect(await saved.getByLabel("Client ID").inputValue()).toBe(client.client_id);
    expect(opened.watcher.unexpected([404])).toEqual([]);
  });

  it("signs a person in with the provider, who sees only the projects they were given", async () => {
    const opened = await openPage();
    adaPage = opened.page;
    await adaPage.goto(`${baseUrl}/`);
    await adaPage.getByRole("button", { name: "Continue with single sign-on" }).waitFor();
    await screenshot(adaPage, "sign-in-sso");
    await signInWithSso(adaPage, oidcIssuer, ada, orgSlug);
    expect(new URL(adaPage.url()).pathname).toBe("/");
    await adaPage.getByText("No projects yet").waitFor();
    // The access token is in memory only: nothing in either storage; the session is the HttpOnly cookie.
    expect(await adaPage.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
    const cookies = await opened.context.cookies();
    const jid = cookies.find((c) => c.name === "jid");
    expect(jid).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/api/v1/auth" });

    // The admin adds her to one project from its People tab.
    await adminPage.goto(`${baseUrl}/projects/${seeded.projectId}/people`);
    await adminPage.getByRole("heading", { name: "People in this project" }).waitFor();
    await adminPage.getByLabel("E-mail").fill(ada.email);
    await adminPage.getByLabel("Project role").selectOption("viewer");
    await adminPage.getByRole("button", { name: "Add to project" }).click();
    const row = adminPage
      .getByRole("table", { name: "Project people" })
      .getByRole("row")
      .filter({ hasText: ada.email });
    await row.getByText("viewer").waitFor();
    await screenshot(adminPage, "project-people");

    // A reload keeps her signed in (the cookie), and now shows that project and no other.
    await adaPage.reload();
    await adaPage.getByRole("link", { name: "Payments API" }).waitFor();
    expect(await projectCards(adaPage)).toEqual(["Payments API"]);
    await adaPage.getByRole("banner").getByText(ada.email).waitFor();
    await screenshot(adaPage, "person-projects");

    // What she may not see is "not allowed", not a broken page.
    await adaPage.getByRole("link", { name: "Organization" }).click();
    await adaPage.getByText("Not allowed:").first().waitFor();
    expect(opened.watcher.unexpected([403])).toEqual([]);
  });

  it("invites a second person with a project; she signs in from the link and has it", async () => {
    await adminPage.goto(`${baseUrl}/organization`);
    const people = adminPage.getByRole("table", { name: "People" });
    await people.getByRole("row").filter({ hasText: ada.email }).waitFor();
    const invite = adminPage.getByRole("form", { name: "Invite people" });
    await invite.getByLabel("E-mails").fill(grace.email);
    await invite.getByLabel("Organization role").selectOption("member");
    await invite.getByLabel("Edge certificates").check();
    await invite.getByRole("button", { name: "Send invitations" }).click();
    const links = adminPage.getByRole("list", { name: "Invitation links" });
    await links.waitFor();
    const link = (await links.locator("code").textContent()) ?? "";
    expect(link).toContain(`/login?org=${orgSlug}&email=`);
    const invited = people.getByRole("row").filter({ hasText: grace.email });
    await invited.getByText("invited").waitFor();
    await screenshot(adminPage, "people");

    const { page, watcher } = await openPage();
    const url = new URL(link);
    await page.goto(`${baseUrl}${url.pathname}${url.search}`);
    expect(await page.getByLabel("Organization").inputValue()).toBe(orgSlug);
    await page.getByText(`You were invited as ${grace.email}`).waitFor();
    await page.getByRole("button", { name: "Continue with single sign-on" }).click();
    await signInAtProvider(page, oidcIssuer, grace);
    await page.getByRole("banner").getByText(grace.email).waitFor();
    await page.getByRole("link", { name: "Edge certificates" }).waitFor();
    expect(await projectCards(page)).toEqual(["Edge certificates"]);

    // The admin sees the invitation claimed.
    await adminPage.reload();
    await people.getByRole("row").filter({ hasText: grace.email }).getByText("accepted").waitFor();
    expect(await people.getByLabel(`Role of ${grace.email}`).inputValue()).toBe("member");

    // Signed in, the invitation link opens the console's start page.
    await page.goto(`${baseUrl}${url.pathname}${url.search}`);
    await page.waitForURL(`${baseUrl}/`);
    await page.getByRole("link", { name: "Edge certificates" }).waitFor();

    // Signing out ends the session server-side: a reload does not bring it back.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    await page.reload();
    await page.getByRole("button", { name: "Continue with single sign-on" }).waitFor();
    expect(watcher.unexpected()).toEqual([]);
  });

  it("changes a person's role, deactivates and removes them", async () => {
    const { page } = await openPage();
    await page.goto(`${baseUrl}/`);
    await signInWithSso(page, oidcIssuer, linus, orgSlug);
    await adminPage.goto(`${baseUrl}/organization`);
    const people = adminPage.getByRole("table", { name: "People" });
    const row = people.getByRole("row").filter({ hasText: linus.email });
    await row.waitFor();
    expect(await row.getByLabel(`Role of ${linus.email}`).inputValue()).toBe("no-access");
    await row.getByLabel(`Role of ${linus.email}`).selectOption("member");
    await expect.poll(async () => row.getByLabel(`Role of ${linus.email}`).inputValue()).toBe("member");
    await expect
      .poll(async () => {
        const { users } = await ok(admin.users.listOrgMemberships({ params: { orgId } }));
        return users.find((m) => m.user?.email === linus.email)?.role;
      })
      .toBe("member");
    await row.getByRole("button", { name: "Deactivate" }).click();
    await row.getByText("deactivated").waitFor();
    await row.getByRole("button", { name: "Remove" }).click();
    await row.waitFor({ state: "detached" });
  });

  it("sends a person whose sessions were ended elsewhere back to sign-in at the next action", async () => {
    // Sign out everywhere through the API, with a token of her own session.
    const token = await adaPage.evaluate(async () => {
      const response = await fetch("/api/v1/auth/token", { method: "POST" });
      return ((await response.json()) as { token: string }).token;
    });
    const ended = await ok(createKeywardClient({ baseUrl, token }).users.revokeMySessions());
    expect(ended.message).toMatch(/Signed out of \d+ session/);
    await adaPage.getByRole("link", { name: "Projects" }).click();
    await adaPage.getByText("Your session has expired. Sign in again.").waitFor();
    await adaPage.reload();
    await adaPage.getByRole("button", { name: "Continue with single sign-on" }).waitFor();
  });

  it("renews a person's access token before it runs out, without interrupting her", async () => {
    const { page, watcher } = await openPage();
    await page.goto(`${baseUrl}/`);
    await signInWithSso(page, oidcIssuer, ada, orgSlug);
    // From here the page's clock is moved forward instead of waiting out the token: reloaded on it, the
    // console takes a fresh token with its refresh cookie and schedules the renewal on that clock.
    await page.clock.install();
    await page.reload();
    await page.getByRole("banner").getByText(ada.email).waitFor();
    // Access tokens live 30 s here: the console asks for a fresh one a few seconds before that.
    const renewal = page.waitForResponse(
      (response) => response.url().endsWith("/api/v1/auth/token") && response.request().method() === "POST",
    );
    await page.clock.fastForward(20_000);
    expect(await page.getByText("Your session has expired").count()).toBe(0);
    await page.clock.fastForward(6_000);
    const renewed = await renewal;
    expect(renewed.status()).toBe(200);
    const { token } = (await renewed.json()) as { token: string };
    // Past the first token's lifetime, the console still works, on the renewed token.
    await page.clock.fastForward(10_000);
    const used = page.waitForRequest(
      (request) => request.url().includes("/api/v") && !request.url().endsWith("/auth/token"),
    );
    await page.getByRole("link", { name: "Payments API" }).click();
    await page.getByRole("heading", { name: "Payments API" }).waitFor();
    expect((await used).headers().authorization).toBe(`Bearer ${token}`);
    await page.getByRole("banner").getByText(ada.email).waitFor();
    expect(await page.getByText("Your session has expired").count()).toBe(0);
    expect(watcher.unexpected()).toEqual([]);
  });

  it("hands the command line a session of its own, with the listener's state, and shows the code to paste", async () => {
    let server: Server | undefined;
    try {
      const received = new Promise<{ body: string; origin: string | undefined }>((resolve) => {
        server = createServer((req, res) => {
          // As `keyward login`'s listener: the console's origin may POST JSON to it.
          res.setHeader("access-control-allow-origin", req.headers.origin ?? "*");
          res.setHeader("access-control-allow-methods", "POST, OPTIONS");
          res.setHeader("access-control-allow-headers", "content-type");
          if (req.method === "OPTIONS") return void res.writeHead(204).end();
          const chunks: Buffer[] = [];
          req.on("data", (chunk: Buffer) => chunks.push(chunk));
          req.on("end", () => {
            res.writeHead(200, { "content-type": "text/plain" }).end("ok");
            resolve({ body: Buffer.concat(chunks).toString("utf8"), origin: req.headers.origin });
          });
        });
      });
      server!.listen(0, "127.0.0.1");
      await once(server!, "listening");
      const port = (server!.address() as AddressInfo).port;
      const state = "cli-state-0123456789abcdef";

      // `keyward login` opens the browser at the sign-in route with its port and state.
      const { page, watcher } = await openPage();
      await page.goto(
        `${baseUrl}/api/v1/sso/oidc/login?orgSlug=${orgSlug}&callbackPort=${port}&callbackState=${state}`,
      );
      await signInAtProvider(page, oidcIssuer, ada);
      await page.getByText("You can return to your terminal").waitFor();
      expect(new URL(page.url()).pathname).toBe("/login/cli");
      const { body, origin } = await received;
      expect(origin).toBe(baseUrl);
      const handoff = JSON.parse(body) as Record<string, string>;
      expect(handoff).toEqual({
        email: ada.email,
        privateKey: "",
        JTWToken: expect.any(String),
        RefreshToken: expect.any(String),
        state,
      });
      const code = await page.getByLabel("Code to paste into the terminal").inputValue();
      expect(JSON.parse(Buffer.from(code, "base64").toString("utf8"))).toEqual(handoff);
      await screenshot(page, "cli-login");
      // The handed-over session is the person's own.
      const cli = createKeywardClient({ baseUrl, token: handoff.JTWToken });
      expect((await ok(cli.users.me())).user.email).toBe(ada.email);

      // Without a listener (`keyward login --no-browser`): only the code to paste.
      await page.goto(`${baseUrl}/login/cli?org=${orgSlug}`);
      const pasted = await page.getByLabel("Code to paste into the terminal").inputValue();
      expect(JSON.parse(Buffer.from(pasted, "base64").toString("utf8"))).toMatchObject({ email: ada.email });
      expect(await page.getByText("You can return to your terminal").count()).toBe(0);
      expect(watcher.unexpected()).toEqual([]);
    } finally {
      server?.closeAllConnections();
      server?.close();
    }
  });
});
