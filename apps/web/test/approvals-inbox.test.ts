import { createKeywardClient, ok } from "@keyward/client";
import { beforeAll, describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded } = testContext();
// The console signs in as the seeded admin identity (console-admin); policies name it, or someone else.
const admin = createKeywardClient({ baseUrl, token: seeded.token });
const ui = browserPerTest(browserEndpoint);

let consoleAdminId: string;

beforeAll(async () => {
  const { organizations } = await ok(admin.users.organizations());
  const { identities } = await ok(
    admin.identities.list({ query: { orgId: organizations[0]!.id, search: "console-admin", offset: 0, limit: 10 } }),
  );
  consoleAdminId = identities.find((identity) => identity.name === "console-admin")!.id;
});

/**
 * A project whose dev root takes changes only through a change request and whose prod is read only
 * after an access request, both approved by `approver` (console-admin unless another member is named);
 * its member has proposed a new API_KEY and asked to read prod.
 */
const waitingProject = async (name: string, approver: "console-admin" | "a member of its own") => {
  const { project } = await ok(admin.projects.create({ body: { projectName: name, type: "secret-manager" } }));
  const at = (environment: string) => ({ workspaceId: project.id, environment, secretPath: "/" });
  await ok(admin.secretsV3.create({ params: { secretName: "API_KEY" }, body: { ...at("dev"), secretValue: "old" } }));
  await ok(admin.secretsV3.create({ params: { secretName: "PROD_DB" }, body: { ...at("prod"), secretValue: "pw" } }));
  const approverId =
    approver === "console-admin"
      ? consoleAdminId
      : (await projectMemberToken(admin, project, `${name}-ap`, "admin")).id;
  const approvers = [{ type: "identity" as const, id: approverId }];
  await ok(
    admin.secretApprovalPolicies.create({
      body: { projectId: project.id, name: "dev-root", environment: "dev", secretPath: "/", approvers },
    }),
  );
  await ok(
    admin.accessApprovalPolicies.create({
      body: { projectSlug: project.slug, name: "prod-read", environment: "prod", secretPath: "/", approvers },
    }),
  );
  const { role } = await ok(
    admin.roles.create({
      params: { projectId: project.id },
      body: {
        slug: "dev-writer",
        name: "Dev writer",
        permissions: [
          { subject: "secrets", action: ["describeSecret", "readValue", "edit"], conditions: { environment: "dev" } },
          { subject: "secrets", action: ["describeSecret"] },
        ],
      },
    }),
  );
  const member = await projectMemberToken(admin, project, `${name}-member`, role.slug);
  const memberClient = createKeywardClient({ baseUrl, token: member.token });
  const proposed = await ok(
    memberClient.secretsV3.update({ params: { secretName: "API_KEY" }, body: { ...at("dev"), secretValue: "new" } }),
  );
  expect(proposed).toHaveProperty("approval");
  await ok(
    memberClient.accessApprovalRequests.create({
      query: { projectSlug: project.slug },
      body: { permissions: [["read", "secrets", { environment: "prod", secretPath: "/" }]], isTemporary: false },
    }),
  );
  return { project, member, memberClient };
};

describe("the approvals inbox", () => {
  it("lists what waits for my review across projects; an access request is approved in place, a change request merged from its diff", async () => {
    const mine = await waitingProject("Inbox billing", "console-admin");
    await waitingProject("Inbox ledger", "a member of its own");
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Approvals" }).click();
    const changes = ui.page.getByRole("table", { name: "Change requests waiting for my review" });
    const access = ui.page.getByRole("table", { name: "Access requests waiting for my review" });
    const changeRow = changes.getByRole("row").filter({ hasText: "Inbox billing" });
    const accessRow = access.getByRole("row").filter({ hasText: "Inbox billing" });
    await changeRow.getByRole("link", { name: "API_KEY" }).waitFor();
    await accessRow.getByRole("rowheader", { name: "Inbox billing-member" }).waitFor();
    // console-admin may read every request of the other project, but none waits for its review.
    expect(await ui.page.getByRole("row").filter({ hasText: "Inbox ledger" }).count()).toBe(0);
    await screenshot(ui.page, "approvals-inbox");

    // The member cannot read prod until the request is approved, in the inbox's own row.
    expect(
      (
        await mine.memberClient.secretsV3.get({
          params: { secretName: "PROD_DB" },
          query: { workspaceId: mine.project.id, environment: "prod", secretPath: "/" },
        })
      ).status,
    ).toBe(403);
    await accessRow.getByRole("button", { name: /^Approve/ }).click();
    await accessRow.waitFor({ state: "detached" });
    const read = await mine.memberClient.secretsV3.get({
      params: { secretName: "PROD_DB" },
      query: { workspaceId: mine.project.id, environment: "prod", secretPath: "/" },
    });
    expect(read.status).toBe(200);

    // The change request opens on its diff; approving and merging writes the proposed value.
    await changeRow.getByRole("link", { name: "API_KEY" }).click();
    const diff = ui.page.getByRole("table", { name: "Changes" });
    await diff.getByRole("row").filter({ hasText: "API_KEY" }).getByText("new").waitFor();
    await ui.page.getByRole("form", { name: "Review" }).getByRole("button", { name: "Approve" }).click();
    await ui.page.getByText("1 of 1 approvals").first().waitFor();
    await ui.page.getByRole("button", { name: "Merge" }).click();
    await ui.page.getByText("merged").first().waitFor();
    const merged = await admin.secretsV3.get({
      params: { secretName: "API_KEY" },
      query: { workspaceId: mine.project.id, environment: "dev", secretPath: "/" },
    });
    expect(merged.status === 200 && merged.body.secret.secretValue).toBe("new");

    await ui.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Approvals" }).click();
    await ui.page.getByRole("heading", { name: "Approvals" }).waitFor();
    await ui.page.getByText("Loading approvals").waitFor({ state: "detached" });
    // The list may first show what it held before the merge while it asks again: wait for the answer.
    await ui.page.getByRole("row").filter({ hasText: "Inbox billing" }).first().waitFor({ state: "detached" });
    expect(await ui.page.getByRole("row").filter({ hasText: "Inbox billing" }).count()).toBe(0);
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("shows a member who approves nothing an empty inbox, even with requests of their own pending", async () => {
    const { member } = await waitingProject("Inbox payroll", "console-admin");
    await signInWithToken(ui.page, baseUrl, member.token);
    await ui.page.goto(`${baseUrl}/approvals`);
    await ui.page.getByText("No change request waits for your review.").waitFor();
    await ui.page.getByText("No access request waits for your review.").waitFor();
    expect(await ui.page.getByRole("table").count()).toBe(0);
    expect(ui.watcher.unexpected()).toEqual([]);
  });
});
