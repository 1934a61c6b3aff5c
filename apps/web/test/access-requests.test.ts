import { createKeywardClient, ok } from "@keyward/client";
import { describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded } = testContext();
// The seeded admin identity (console-admin) approves; a member with a role that reads no value asks.
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

/** A project whose prod secrets a policy guards (console-admin approves), and a member who may list but not read them. */
const guardedProject = async (name: string) => {
  const { project } = await ok(admin.projects.create({ body: { projectName: name, type: "secret-manager" } }));
  await ok(
    admin.secretsV3.create({
      params: { secretName: "PROD_DB" },
      body: { workspaceId: project.id, environment: "prod", secretPath: "/", secretValue: "prod-db-password" },
    }),
  );
  const { identities } = await ok(
    admin.identities.list({ query: { orgId: project.orgId, search: "console-admin", offset: 0, limit: 10 } }),
  );
  const approver = identities.find((identity) => identity.name === "console-admin")!;
  await ok(
    admin.accessApprovalPolicies.create({
      body: {
        projectSlug: project.slug,
        name: "prod-access",
        environment: "prod",
        secretPath: "/",
        approvers: [{ type: "identity", id: approver.id }],
      },
    }),
  );
  const { role } = await ok(
    admin.roles.create({
      params: { projectId: project.id },
      body: { slug: "lister", name: "Lister", permissions: [{ subject: "secrets", action: ["describeSecret"] }] },
    }),
  );
  return { project, requester: await projectMemberToken(admin, project, `${name}-requester`, role.slug) };
};

describe("access requests in the console", () => {
  it("asks for access from a secret the caller cannot read, and an approver approves it in place", async () => {
    const { project, requester } = await guardedProject("Guarded payments");
    await signInWithToken(ui.page, baseUrl, requester.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets?env=prod&path=/`);
    const row = ui.page.getByRole("row").filter({ hasText: "PROD_DB" });
    await row
      .getByText("hidden by policy")
      .waitFor()
      .catch(async (e) => {
        console.log("PAGE:", await ui.page.locator("main").innerText());
        throw e;
      });
    await row.getByRole("link", { name: "Request access" }).click();
    const form = ui.page.getByRole("form", { name: "Request access" });
    expect(await form.getByLabel("Environment").inputValue()).toBe("prod");
    expect(await form.getByLabel("Secret path").inputValue()).toBe("/");
    await form.getByLabel("For how long").fill("2h");
    await form.getByRole("button", { name: "Request access" }).click();
    await form.getByText("Requested prod / for 2h: waiting for prod-access's approvers.").waitFor();
    const table = ui.page.getByRole("table", { name: "Access requests" });
    await table.getByRole("row").filter({ hasText: requester.name }).getByText("pending").waitFor();
    // The requester is no approver: the server refuses their approval and the console shows why.
    await table.getByRole("button", { name: /^Approve/ }).click();
    await table.getByRole("alert").waitFor();
    expect(ui.watcher.unexpected([403])).toEqual([]);

    await ui.page.getByRole("button", { name: "Sign out" }).click();
    await ui.page.getByText("You are signed out.").waitFor();
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/access-requests`);
    const pending = ui.page
      .getByRole("table", { name: "Access requests" })
      .getByRole("row")
      .filter({ hasText: requester.name });
    await pending.getByText("0 of 1 approvals").waitFor();
    await screenshot(ui.page, "access-requests");
    await pending.getByRole("button", { name: `Approve ${requester.name}'s request` }).click();
    await pending.getByText("approved").waitFor();
    const { requests } = await ok(admin.accessApprovalRequests.list({ query: { projectSlug: project.slug } }));
    expect(requests.map((r) => [r.status, r.temporaryRange])).toEqual([["approved", "2h"]]);

    // The approved request lets the requester read the value.
    const asRequester = createKeywardClient({ baseUrl, token: requester.token });
    const { secret } = await ok(
      asRequester.secretsV3.get({
        params: { secretName: "PROD_DB" },
        query: { workspaceId: project.id, environment: "prod", secretPath: "/", viewSecretValue: "true" },
      }),
    );
    expect(secret.secretValue).toBe("prod-db-password");
  });

  it("shows the contract's rule before sending a request", async () => {
    const { project, requester } = await guardedProject("Guarded ledger");
    await signInWithToken(ui.page, baseUrl, requester.token);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/access-requests`);
    const form = ui.page.getByRole("form", { name: "Request access" });
    await form.getByLabel("For how long").fill("soon");
    await form.getByRole("button", { name: "Request access" }).click();
    await form.getByText("Temporary range must be a positive number").waitFor();
    await ui.page.getByText("No access requests in this project.").waitFor();
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});
