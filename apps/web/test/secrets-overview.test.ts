import { createKeywardClient, ok } from "@keyward/client";
import { describe, expect, it } from "vitest";
import { browserPerTest, downloadedText, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

/** A project of its own with dev, staging and prod, and secrets set per environment at the root. */
const projectWith = async (name: string, secrets: Record<string, Record<string, string>>) => {
  const { project } = await ok(admin.projects.create({ body: { projectName: name, type: "secret-manager" } }));
  for (const [environment, values] of Object.entries(secrets))
    await ok(
      admin.secretsV3.batchCreate({
        body: {
          workspaceId: project.id,
          environment,
          secretPath: "/",
          secrets: Object.entries(values).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
        },
      }),
    );
  return project;
};

const valueIn = async (projectId: string, environment: string, secretName: string) =>
  (
    await ok(
      admin.secretsV3.get({
        params: { secretName },
        query: { workspaceId: projectId, environment, secretPath: "/", viewSecretValue: "true" },
      }),
    )
  ).secret.secretValue;

describe("a folder across every environment", () => {
  it("marks missing keys, reveals and copies a cell, adds a missing one and edits another in place", async () => {
    const project = await projectWith("Overview service", {
      dev: { API_URL: "https://dev.example.test", ONLY_DEV: "dev-only" },
      staging: { API_URL: "https://staging.example.test" },
      prod: { API_URL: "https://example.test" },
    });
    await ui.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl });
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/overview`);
    const table = ui.page.getByRole("table", { name: "Secrets across environments" });
    const onlyDev = table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: /ONLY_DEV/ }) });
    await onlyDev.getByText("missing in 2").waitFor();
    expect(await onlyDev.getByText("missing", { exact: true }).count()).toBe(2);
    // Values stay masked until revealed; Copy copies without revealing.
    const apiUrl = table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: /API_URL/ }) });
    expect(await apiUrl.textContent()).not.toContain("example.test");
    await apiUrl.getByRole("button", { name: "Copy API_URL in Staging" }).click();
    await apiUrl.getByRole("button", { name: "Copied" }).waitFor();
    expect(await ui.page.evaluate(() => navigator.clipboard.readText())).toBe("https://staging.example.test");
    expect(await apiUrl.textContent()).not.toContain("staging.example.test");
    await apiUrl.getByRole("button", { name: "Reveal API_URL in Production" }).click();
    await apiUrl.getByText("https://example.test").waitFor();

    // Fill the gap in staging, then change prod's API_URL, without leaving the table.
    await onlyDev.getByRole("button", { name: "Add ONLY_DEV in Staging" }).click();
    await onlyDev.getByLabel("Value of ONLY_DEV in staging").fill("staging-too");
    await onlyDev.getByRole("button", { name: "Save" }).click();
    await onlyDev.getByText("missing in 1").waitFor();
    expect(await valueIn(project.id, "staging", "ONLY_DEV")).toBe("staging-too");
    await apiUrl.getByRole("button", { name: "Edit API_URL in Production" }).click();
    const input = apiUrl.getByLabel("Value of API_URL in prod");
    expect(await input.inputValue()).toBe("https://example.test");
    await input.fill("https://www.example.test");
    await apiUrl.getByRole("button", { name: "Save" }).click();
    await apiUrl.getByRole("button", { name: "Edit API_URL in Production" }).waitFor();
    expect(await valueIn(project.id, "prod", "API_URL")).toBe("https://www.example.test");
    await screenshot(ui.page, "secrets-overview");
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("shows a reader only what they may read, says where they may not see, and offers only what they may do", async () => {
    const project = await projectWith("Overview limited", {
      dev: { TOKEN: "dev-token" },
      prod: { TOKEN: "prod-token" },
    });
    const { role } = await ok(
      admin.roles.create({
        params: { projectId: project.id },
        body: {
          slug: "dev-reader",
          name: "Dev reader",
          permissions: [
            { subject: "secrets", action: ["describeSecret", "readValue"], conditions: { environment: "dev" } },
          ],
        },
      }),
    );
    const { token: accessToken } = await projectMemberToken(admin, project, "dev-reader", role.slug);
    await signInWithToken(ui.page, baseUrl, accessToken);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/overview`);
    const table = ui.page.getByRole("table", { name: "Secrets across environments" });
    const token = table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: /TOKEN/ }) });
    await token.getByRole("button", { name: "Reveal TOKEN in Development" }).click();
    await token.getByText("dev-token").waitFor();
    // Prod's TOKEN is not listed to this reader, whose rules say they could not see it there: not "missing".
    const cells = token.getByRole("cell");
    await cells.nth(2).getByText("not allowed", { exact: true }).waitFor();
    // Staging (absent there) is outside the rules too; only dev is theirs.
    expect(await cells.getByText("not allowed", { exact: true }).count()).toBe(2);
    expect(await token.getByText("missing").count()).toBe(0);
    expect(await table.textContent()).not.toContain("prod-token");
    // Only what the rules allow is offered: this reader may neither add, edit nor delete.
    expect(await token.getByRole("button", { name: /^(Add|Edit|Delete) TOKEN/ }).count()).toBe(0);
    expect(await valueIn(project.id, "dev", "TOKEN")).toBe("dev-token");
    expect(await valueIn(project.id, "prod", "TOKEN")).toBe("prod-token");
    expect(ui.watcher.unexpected([403])).toEqual([]);
  });

  it("offers adding only where the caller may create, and adds in place", async () => {
    const project = await projectWith("Overview writer", { dev: { TOKEN: "dev-token" } });
    const { role } = await ok(
      admin.roles.create({
        params: { projectId: project.id },
        body: {
          slug: "writer",
          name: "Writer",
          permissions: [
            { subject: "secrets", action: ["describeSecret", "readValue", "create", "edit"] },
            { subject: "secrets", action: ["create"], inverted: true, conditions: { environment: "prod" } },
          ],
        },
      }),
    );
    const { token: accessToken } = await projectMemberToken(admin, project, "writer", role.slug);
    await signInWithToken(ui.page, baseUrl, accessToken);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/overview`);
    const table = ui.page.getByRole("table", { name: "Secrets across environments" });
    const token = table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: /TOKEN/ }) });
    await token.getByRole("button", { name: "Edit TOKEN in Development" }).waitFor();
    // Staging may be added to; prod may not, and offers nothing.
    await token.getByRole("button", { name: "Add TOKEN in Staging" }).waitFor();
    expect(await token.getByRole("button", { name: "Add TOKEN in Production" }).count()).toBe(0);
    expect(await token.getByRole("button", { name: /^Delete TOKEN/ }).count()).toBe(0);
    await token.getByRole("button", { name: "Add TOKEN in Staging" }).click();
    await token.getByLabel("Value of TOKEN in staging").fill("staging-token");
    await token.getByRole("button", { name: "Save" }).click();
    await token.getByRole("button", { name: "Edit TOKEN in Staging" }).waitFor();
    expect(await valueIn(project.id, "staging", "TOKEN")).toBe("staging-token");
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});

describe("one environment's table", () => {
  it("edits a value in place (Enter saves), and offers editing and deleting only where the caller's rules allow", async () => {
    const project = await projectWith("Inline edit", { dev: { DB_HOST: "db-1.internal", LOCKED: "fixed" } });
    const { role } = await ok(
      admin.roles.create({
        params: { projectId: project.id },
        body: {
          slug: "host-editor",
          name: "Host editor",
          permissions: [
            { subject: "secrets", action: ["describeSecret", "readValue"] },
            { subject: "secrets", action: ["edit"], conditions: { secretName: "DB_HOST" } },
            { subject: "secret-imports", action: ["read"] },
          ],
        },
      }),
    );
    const { token: accessToken } = await projectMemberToken(admin, project, "host-editor", role.slug);
    await signInWithToken(ui.page, baseUrl, accessToken);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets?env=dev&path=/`);
    const table = ui.page.getByRole("table", { name: "Secrets" });
    const row = (key: string) =>
      table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: new RegExp(key) }) });
    await row("DB_HOST").getByRole("button", { name: "Edit value of DB_HOST" }).click();
    const input = row("DB_HOST").getByLabel("Value of DB_HOST in dev");
    expect(await input.inputValue()).toBe("db-1.internal");
    await input.fill("db-2.internal");
    await input.press("Enter");
    await row("DB_HOST").getByText("v2").waitFor();
    expect(await valueIn(project.id, "dev", "DB_HOST")).toBe("db-2.internal");
    // LOCKED may be read, not edited; neither key may be deleted: nothing of the kind is offered.
    await row("LOCKED").getByRole("button", { name: "Versions" }).waitFor();
    expect(await row("LOCKED").getByRole("button", { name: /^Edit/ }).count()).toBe(0);
    expect(await table.getByRole("button", { name: "Delete" }).count()).toBe(0);
    await row("DB_HOST").getByRole("button", { name: "Edit", exact: true }).waitFor();
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});

describe("moving secrets in and out as text", () => {
  it("previews a pasted .env (create, overwrite, unchanged), imports it in one batch, and downloads the folder", async () => {
    const project = await projectWith("Import service", { dev: { KEEP: "same", CHANGE: "old" } });
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets?env=dev&path=/`);
    await ui.page.getByRole("table", { name: "Secrets" }).waitFor();
    await ui.page.getByRole("button", { name: "Import" }).click();
    const dialog = ui.page.getByRole("dialog", { name: "Import secrets into dev /" });
    await dialog
      .getByLabel(".env, JSON or YAML")
      .fill(
        '# pasted\nKEEP=same\nexport CHANGE="new # not a comment"\nMULTI="line one\\nline two"\nNEW=fresh # note\n',
      );
    const preview = dialog.getByRole("table", { name: "Import preview" });
    const actionOf = async (key: string) =>
      (
        await preview
          .getByRole("row")
          .filter({ has: ui.page.getByRole("rowheader", { name: key }) })
          .textContent()
      )
        ?.replace(key, "")
        .trim();
    await dialog.getByText("Read as .env: 4 keys, 2 to create, 1 to overwrite.").waitFor();
    expect(await actionOf("KEEP")).toBe("unchanged");
    expect(await actionOf("CHANGE")).toBe("overwrite");
    expect(await actionOf("NEW")).toBe("create");
    // Nothing was written before the confirmation.
    expect(await valueIn(project.id, "dev", "CHANGE")).toBe("old");
    await dialog.getByRole("button", { name: "Import 3 secrets" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await valueIn(project.id, "dev", "CHANGE")).toBe("new # not a comment");
    expect(await valueIn(project.id, "dev", "MULTI")).toBe("line one\nline two");
    expect(await valueIn(project.id, "dev", "NEW")).toBe("fresh");
    await ui.page
      .getByRole("table", { name: "Secrets" })
      .getByRole("rowheader", { name: "NEW", exact: true })
      .waitFor();

    const [download] = await Promise.all([
      ui.page.waitForEvent("download"),
      ui.page.getByRole("button", { name: "Download .env" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("dev.env");
    const text = await downloadedText(download);
    expect(text.split("\n").sort()).toEqual(
      ["", 'CHANGE="new # not a comment"', "KEEP=same", 'MULTI="line one\\nline two"', "NEW=fresh"].sort(),
    );
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("shows what it could not read and refuses nested YAML, sending nothing", async () => {
    const project = await projectWith("Import refusals", { dev: { A: "1" } });
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets?env=dev&path=/`);
    await ui.page.getByRole("button", { name: "Import" }).click();
    const dialog = ui.page.getByRole("dialog", { name: "Import secrets into dev /" });
    await dialog.getByLabel(".env, JSON or YAML").fill("DB:\n  host: db\nA: '1'\n");
    const problems = dialog.getByRole("list", { name: "Problems in the text" });
    await problems.getByText("DB holds a nested value").waitFor();
    await dialog.getByRole("button", { name: "Nothing to import" }).waitFor();
    expect(await dialog.getByRole("button", { name: "Nothing to import" }).isDisabled()).toBe(true);
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});

describe("a secret's versions", () => {
  it("masks every version's value until it is revealed", async () => {
    const project = await projectWith("Versions masked", { dev: { ROTATED: "first-value" } });
    await ok(
      admin.secretsV3.update({
        params: { secretName: "ROTATED" },
        body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: "second-value" },
      }),
    );
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets?env=dev&path=/`);
    await ui.page.getByRole("row").filter({ hasText: "ROTATED" }).getByRole("button", { name: "Versions" }).click();
    const versions = ui.page.getByRole("dialog", { name: "Versions of ROTATED" });
    await versions.getByRole("button", { name: "Reveal v1" }).waitFor();
    expect(await versions.textContent()).not.toContain("first-value");
    expect(await versions.textContent()).not.toContain("second-value");
    await versions.getByRole("button", { name: "Reveal v1" }).click();
    await versions.getByText("first-value").waitFor();
    expect(await versions.textContent()).not.toContain("second-value");
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});
