import { createKeywardClient, ok, type KeywardClient } from "@keyward/client";
import { describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

const place = (projectId: string) => ({ workspaceId: projectId, environment: "dev", secretPath: "/" });

/** dev's root as a name → value map, read through the API. */
const devValues = async (client: KeywardClient, projectId: string) => {
  const { secrets } = await ok(
    client.secretsV3.list({ query: { ...place(projectId), viewSecretValue: "true", include_imports: "false" } }),
  );
  return Object.fromEntries(secrets.map((s) => [s.secretKey, s.secretValue]));
};

/** A project whose dev root went: {A: 1, B: 2} → A changed → B deleted → C added. */
const projectWithHistory = async (name: string) => {
  const { project } = await ok(admin.projects.create({ body: { projectName: name, type: "secret-manager" } }));
  await ok(
    admin.secretsV3.batchCreate({
      body: {
        ...place(project.id),
        secrets: [
          { secretKey: "A", secretValue: "one" },
          { secretKey: "B", secretValue: "two" },
        ],
      },
    }),
  );
  await ok(admin.secretsV3.update({ params: { secretName: "A" }, body: { ...place(project.id), secretValue: "ten" } }));
  await ok(admin.secretsV3.delete({ params: { secretName: "B" }, body: place(project.id) }));
  await ok(
    admin.secretsV3.create({ params: { secretName: "C" }, body: { ...place(project.id), secretValue: "three" } }),
  );
  return project;
};

describe("a folder's history", () => {
  it("lists the commits, shows what one changed (masked), previews a rollback and carries it out as a new commit", async () => {
    const project = await projectWithHistory("History service");
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/history?env=dev&path=/`);
    const commits = ui.page.getByRole("table", { name: "Commits" });
    // Newest first: the four writes (the folder's initial commit may precede them).
    const rows = commits.getByRole("row").filter({ has: ui.page.getByRole("rowheader") });
    await rows.first().getByText("current").waitFor();
    const listed = await ok(admin.pit.list({ query: { projectId: project.id, environment: "dev", path: "/" } }));
    expect(await rows.count()).toBe(listed.total);
    const first = listed.commits.find((c) => c.changesCount === 2)!;

    // What the first write did: A and B created, values masked until revealed.
    const firstRow = rows.filter({
      has: ui.page.getByRole("rowheader", { name: new RegExp(`#${first.commitId}\\b`) }),
    });
    await firstRow.getByRole("button", { name: `Changes of commit ${first.commitId}` }).click();
    const changes = ui.page.getByRole("table", { name: `Changes of commit ${first.commitId}` });
    await changes.getByText("created").first().waitFor();
    expect(await changes.getByText("created").count()).toBe(2);
    expect(await changes.textContent()).not.toContain("one");
    await changes.getByRole("button", { name: `Reveal A at commit ${first.commitId}` }).click();
    await changes.getByText("one", { exact: true }).waitFor();

    // Roll back to it: A changed back, B restored, C removed — previewed first, then done.
    await firstRow.getByRole("button", { name: `Roll back to here (commit ${first.commitId})` }).click();
    const preview = ui.page.getByRole("table", { name: `Rollback to commit ${first.commitId}` });
    const previewRow = (key: string) =>
      preview.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: key, exact: true }) });
    await previewRow("A").getByText("changed back").waitFor();
    await previewRow("B").getByText("restored").waitFor();
    await previewRow("C").getByText("removed").waitFor();
    await screenshot(ui.page, "history");
    await ui.page.getByLabel("Message (optional)").fill("Undo the morning's changes");
    await ui.page.getByRole("button", { name: `Roll back to commit ${first.commitId}` }).click();
    await ui.page.getByRole("status").filter({ hasText: "3 changes, written as a new commit" }).waitFor();
    expect(await devValues(admin, project.id)).toEqual({ A: "one", B: "two" });
    // History is kept: the rollback is the newest commit, with its message, above the ones it undid.
    await rows.first().getByText("Undo the morning's changes").waitFor();
    expect(await rows.count()).toBe(listed.total + 1);
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("shows a viewer the history and the preview, and the server's refusal when they try to roll back", async () => {
    const project = await projectWithHistory("History viewer");
    const { token } = await projectMemberToken(admin, project, "history-viewer", "viewer");
    await signInWithToken(ui.page, baseUrl, token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/history?env=dev&path=/`);
    const rows = ui.page
      .getByRole("table", { name: "Commits" })
      .getByRole("row")
      .filter({ has: ui.page.getByRole("rowheader") });
    await rows.first().getByText("current").waitFor();
    const listed = await ok(admin.pit.list({ query: { projectId: project.id, environment: "dev", path: "/" } }));
    const first = listed.commits.find((c) => c.changesCount === 2)!;
    await ui.page.getByRole("button", { name: `Roll back to here (commit ${first.commitId})` }).click();
    await ui.page
      .getByRole("table", { name: `Rollback to commit ${first.commitId}` })
      .getByText("restored")
      .waitFor();
    await ui.page.getByRole("button", { name: `Roll back to commit ${first.commitId}` }).click();
    await ui.page.getByRole("alert").getByText("Not allowed").waitFor();
    expect(await devValues(admin, project.id)).toEqual({ A: "ten", C: "three" });
    expect(ui.watcher.unexpected([403])).toEqual([]);
  });

  it("shows a deleted subfolder in its parent's history and brings it back with its secrets", async () => {
    const { project } = await ok(
      admin.projects.create({ body: { projectName: "History folders", type: "secret-manager" } }),
    );
    await ok(admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name: "app" } }));
    await ok(
      admin.secretsV3.create({
        params: { secretName: "INSIDE" },
        body: { ...place(project.id), secretPath: "/app", secretValue: "kept" },
      }),
    );
    await ok(
      admin.folders.delete({
        params: { folderIdOrName: "app" },
        body: { workspaceId: project.id, environment: "dev", path: "/" },
      }),
    );
    const listed = await ok(admin.pit.list({ query: { projectId: project.id, environment: "dev", path: "/" } }));
    const [deletion, creation] = listed.commits;
    expect([deletion!.message, creation!.message]).toEqual(["Folder Deleted", "Folder Created"]);
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/history?env=dev&path=/`);
    await ui.page.getByRole("button", { name: `Changes of commit ${deletion!.commitId}` }).click();
    const changes = ui.page.getByRole("table", { name: `Changes of commit ${deletion!.commitId}` });
    await changes.getByText("folder deleted").waitFor();
    expect(await changes.getByRole("rowheader").textContent()).toBe("app/");
    await ui.page.getByRole("button", { name: `Roll back to here (commit ${creation!.commitId})` }).click();
    const preview = ui.page.getByRole("table", { name: `Rollback to commit ${creation!.commitId}` });
    await preview.getByText("folder restored with its contents").waitFor();
    await preview.getByRole("rowheader", { name: "INSIDE", exact: true }).waitFor();
    await ui.page.getByRole("button", { name: `Roll back to commit ${creation!.commitId}` }).click();
    await ui.page.getByRole("status").filter({ hasText: "2 changes, written as a new commit" }).waitFor();
    const inside = await ok(
      admin.secretsV3.get({
        params: { secretName: "INSIDE" },
        query: { ...place(project.id), secretPath: "/app", viewSecretValue: "true" },
      }),
    );
    expect(inside.secret.secretValue).toBe("kept");
    await screenshot(ui.page, "history-folder-restored");
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});
