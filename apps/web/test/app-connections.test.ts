import { createKeywardClient, ok } from "@keyward/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
// The server suite's GitHub Enterprise Server stand-in: Keyward connects to it before saving a connection.
import { startGitHubFake, type GitHubFake } from "../../server/test/services/github-destination";

const { baseUrl, browserEndpoint, seeded, peerCa } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });
const PAT = "ghp_consoleConnectionToken0123456789";

const ui = browserPerTest(browserEndpoint);
let github: GitHubFake;

beforeAll(async () => {
  github = await startGitHubFake(peerCa, { token: PAT, repositories: [{ owner: "acme", repo: "billing" }] });
});
afterAll(async () => {
  await github?.close();
});

describe("the app connections screen", () => {
  it("adds a GitHub connection (checked by connecting), never shows its token again, and deletes it", async () => {
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.getByRole("link", { name: "App connections" }).click();
    const form = ui.page.getByRole("form", { name: "Add a connection" });
    await form.getByLabel("App").selectOption("github");
    await form.getByLabel("Connection name").fill("billing-github");
    const credentials = form.getByLabel("Credentials (JSON)");
    expect(JSON.parse(await credentials.inputValue())).toEqual({ personalAccessToken: "" });
    // A wrong token: the server's refusal is shown and nothing is saved.
    await credentials.fill(
      JSON.stringify({ personalAccessToken: "ghp_wrong", instanceType: "server", host: new URL(github.url).host }),
    );
    await form.getByRole("button", { name: "Add connection" }).click();
    await form.getByRole("alert").waitFor();
    await credentials.fill(
      JSON.stringify({ personalAccessToken: PAT, instanceType: "server", host: new URL(github.url).host }),
    );
    await form.getByRole("button", { name: "Add connection" }).click();
    const table = ui.page.getByRole("table", { name: "App connections" });
    const row = table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: "billing-github" }) });
    await row.getByText(new URL(github.url).host).waitFor();
    // The form forgot the token and the page never shows it.
    expect(JSON.parse(await credentials.inputValue())).toEqual({ personalAccessToken: "" });
    expect(await ui.page.content()).not.toContain(PAT);
    await screenshot(ui.page, "app-connections");

    ui.page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: "Delete billing-github" }).click();
    await row.waitFor({ state: "detached" });
    const { appConnections } = await ok(admin.appConnections.listAll({ query: {} }));
    expect(appConnections.map((c) => c.name)).not.toContain("billing-github");
    expect(ui.watcher.unexpected([400])).toEqual([]);
  });

  it("checks the credentials against the app's contract before sending", async () => {
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/app-connections`);
    const form = ui.page.getByRole("form", { name: "Add a connection" });
    await form.getByLabel("Connection name").fill("orders-db");
    await form.getByLabel("Credentials (JSON)").fill("{not json");
    await form.getByRole("button", { name: "Add connection" }).click();
    await form.getByText("Credentials must be JSON").waitFor();
    await form.getByLabel("Credentials (JSON)").fill(JSON.stringify({ host: "db.internal", port: 5432 }));
    await form.getByRole("button", { name: "Add connection" }).click();
    await form.getByText("database: Required").waitFor();
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});
