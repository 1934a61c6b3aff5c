import { createKeywardClient, ok } from "@keyward/client";
import { describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

describe("the KMS keys screen", () => {
  it("creates a key, encrypts and decrypts a text with it, rotates it, and a disabled key refuses to encrypt", async () => {
    const { project } = await ok(admin.projects.create({ body: { projectName: "Payments KMS", type: "kms" } }));
    await signInWithToken(ui.page, baseUrl, seeded.token);
    // The projects list links every project to its secrets tab: a KMS project opens on its keys.
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets`);
    const form = ui.page.getByRole("form", { name: "Create a key" });
    await form.getByLabel("Key name").fill("card-tokens");
    await form.getByRole("button", { name: "Create key" }).click();
    const table = ui.page.getByRole("table", { name: "Keys" });
    const row = table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: "card-tokens" }) });
    await row.getByText("aes-256-gcm").waitFor();

    await row.getByRole("button", { name: "Try card-tokens" }).click();
    const trial = ui.page.getByRole("group", { name: "Try card-tokens" });
    await trial.getByLabel("Text to encrypt").fill("4111 1111 1111 1111 ✓");
    await trial.getByRole("button", { name: "Encrypt" }).click();
    const ciphertext = trial.getByLabel("Ciphertext");
    await ciphertext.waitFor();
    expect(await ciphertext.inputValue()).not.toContain("4111");
    await trial.getByRole("button", { name: "Decrypt" }).click();
    await trial.getByText("4111 1111 1111 1111 ✓").waitFor();
    await screenshot(ui.page, "kms-keys");

    await row.getByRole("button", { name: "Rotate card-tokens" }).click();
    await row.getByText("v2").waitFor();
    // A ciphertext of the first version still decrypts after the rotation.
    await trial.getByRole("button", { name: "Decrypt" }).click();
    await trial.getByText("4111 1111 1111 1111 ✓").waitFor();

    await row.getByRole("button", { name: "Disable card-tokens" }).click();
    await row.getByText("disabled").waitFor();
    await trial.getByRole("button", { name: "Encrypt" }).click();
    await trial.getByRole("alert").waitFor();
    const { keys } = await ok(admin.kms.list({ query: { projectId: project.id } }));
    expect(keys.map((k) => [k.name, k.isDisabled, k.version])).toEqual([["card-tokens", true, 2]]);
    expect(ui.watcher.unexpected([400, 403, 422])).toEqual([]);
  });

  it("shows the contract's rule for a key name, and the server's refusal to a member without KMS rights", async () => {
    const { project } = await ok(admin.projects.create({ body: { projectName: "Locked KMS", type: "kms" } }));
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/keys`);
    const form = ui.page.getByRole("form", { name: "Create a key" });
    await form.getByLabel("Key name").fill("Not A Slug");
    await form.getByRole("button", { name: "Create key" }).click();
    await form.locator(".field-error").first().waitFor();
    expect((await ok(admin.kms.list({ query: { projectId: project.id } }))).keys).toEqual([]);
    await ui.page.getByRole("button", { name: "Sign out" }).click();
    await ui.page.getByText("You are signed out.").waitFor();

    const { token: accessToken } = await projectMemberToken(admin, project, "kms-outsider", "no-access");
    await signInWithToken(ui.page, baseUrl, accessToken);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/keys`);
    await ui.page.getByRole("alert").filter({ hasText: "cmek" }).waitFor();
    expect(ui.watcher.unexpected([403])).toEqual([]);
  });
});
