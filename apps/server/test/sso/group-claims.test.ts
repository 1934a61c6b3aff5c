import { beforeAll, describe, expect, it } from "vitest";
import { createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, signIn } from "./sso-helpers";

describe("group memberships managed by the provider's groups claim", () => {
  let tenant: Tenant;
  let platformProject: string;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
    const project = await createProject(tenant);
    platformProject = project.id;
    const platform = expectOk(await tenant.admin.groups.create({ body: { name: "Platform", slug: "platform-team" } }));
    expectOk(await tenant.admin.groups.create({ body: { name: "QA", slug: "qa-team" } }));
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: platform.id },
        body: { role: "viewer" },
      }),
    );
  });

  const projectsOf = async (session: Awaited<ReturnType<typeof signIn>>) =>
    expectOk(await session.client.projects.listWorkspaces({ query: {} })).workspaces.map((w) => w.id);

  it("ignores the claim until the organization turns the management on", async () => {
    const email = `${uniqueName("person")}@example.test`;
    const session = await signIn(tenant, { sub: `sub-${email}`, email, groups: ["platform"] });
    expect(await projectsOf(session)).toEqual([]);
  });

  it("puts a person in the groups the claim names at each sign-in, and takes them out of the others", async () => {
    expectOk(
      await tenant.admin.sso.updateOidcConfig({ body: { organizationId: tenant.orgId, manageGroupMemberships: true } }),
    );
    const email = `${uniqueName("person")}@example.test`;
    const person = { sub: `sub-${email}`, email };
    const first = await signIn(tenant, { ...person, groups: ["Platform", "no-such-group"] });
    expect(await projectsOf(first)).toEqual([platformProject]);
    const qa = expectOk(await tenant.admin.groups.list()).find((g) => g.slug === "qa-team")!;
    const second = await signIn(tenant, { ...person, groups: ["qa-team"] });
    expect(await projectsOf(second)).toEqual([]);
    const qaUsers = expectOk(
      await tenant.admin.groups.listUsers({ params: { id: qa.id }, query: { filter: "existingMembers" } }),
    );
    expect(qaUsers.users.map((u) => u.email)).toEqual([email]);
  });
});
