import { InfisicalSDK } from "@infisical/sdk";
import { describe, expect, it } from "vitest";
import { createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { configureSso, signIn } from "../sso/sso-helpers";

/** The official SDK's projects().inviteMembers (which the MCP server's invite-members-to-project calls), unchanged. */
describe("@infisical/sdk v5 projects().inviteMembers against Keyward", () => {
  it("adds people by e-mail with roles, and passes the reference's error through", async () => {
    const tenant = await createTenant();
    await configureSso(tenant);
    const email = `${uniqueName("sdk-person")}@example.test`;
    const person = await signIn(tenant, { sub: `sub-${email}`, email });
    const project = await createProject(tenant);
    const sdk = new InfisicalSDK({ siteUrl: tenant.app.baseUrl });
    sdk.auth().accessToken(tenant.adminToken);

    const memberships = await sdk
      .projects()
      .inviteMembers({ projectId: project.id, emails: [email], roleSlugs: ["viewer"] });
    expect(memberships).toEqual([expect.objectContaining({ projectId: project.id })]);
    expect(expectOk(await person.client.projects.listWorkspaces({ query: {} })).workspaces.map((w) => w.id)).toEqual([
      project.id,
    ]);
    await expect(sdk.projects().inviteMembers({ projectId: project.id, emails: [email] })).rejects.toThrow(
      /already part of project/,
    );
  });
});
