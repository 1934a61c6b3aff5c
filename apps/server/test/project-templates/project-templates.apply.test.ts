import type { ProjectPermissionRule } from "@keyward/contract";
import { describe, expect, it } from "vitest";
import { createFolder, insertOrgUser } from "../helpers/structure";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";

const importReader = {
  name: "Import Reader",
  slug: "import-reader",
  permissions: [
    { subject: "secret-imports", action: ["read"], conditions: { environment: "qa" } },
  ] satisfies ProjectPermissionRule[],
};

describe("creating a project from a template", () => {
  it("applies environments, custom roles, user, group and identity memberships and project-managed identities", async () => {
    const tenant = await createTenant();
    const user = await insertOrgUser(tenant);
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("g") } }));
    const identity = await createIdentity(tenant);
    const template = expectOk(
      await tenant.admin.projectTemplates.create({
        body: {
          name: uniqueName("full"),
          type: "secret-manager",
          roles: [importReader],
          environments: [
            { name: "QA", slug: "qa", position: 1 },
            { name: "Live", slug: "live", position: 2 },
          ],
          users: [{ username: user.username, roles: ["viewer"] }],
          groups: [{ groupSlug: group.slug, roles: ["import-reader", "viewer"] }],
          identities: [
            { identityId: identity.id, roles: ["import-reader"] },
            { identityId: tenant.adminIdentityId, roles: ["viewer"] },
          ],
          projectManagedIdentities: [{ name: "deployer", roles: ["member"] }],
        },
      }),
    ).projectTemplate;

    const res = await tenant.admin.projects.create({ body: { projectName: "From template", template: template.name } });
    expect(res.status).toBe(200);
    const project = expectOk(res).project;
    expect(project.environments.map((e) => [e.slug, e.position])).toEqual([
      ["qa", 1],
      ["live", 2],
    ]);

    // The listed identity holds the template's custom role, and its rules decide.
    const membership = expectOk(
      await tenant.admin.projects.getIdentityMembership({ params: { projectId: project.id, identityId: identity.id } }),
    );
    expect(membership.identityMembership.roles).toEqual([
      expect.objectContaining({ role: "custom", customRoleSlug: "import-reader", customRoleName: "Import Reader" }),
    ]);
    await createFolder(tenant, project.id, "live", "/", "x");
    expect(
      (await identity.client.secretImports.list({ query: { workspaceId: project.id, environment: "qa" } })).status,
    ).toBe(200);
    expect(
      (await identity.client.secretImports.list({ query: { workspaceId: project.id, environment: "live" } })).status,
    ).toBe(403);

    // The creator stays admin even when the template lists it.
    const creator = expectOk(
      await tenant.admin.projects.getIdentityMembership({
        params: { projectId: project.id, identityId: tenant.adminIdentityId },
      }),
    );
    expect(creator.identityMembership.roles.map((r) => r.role)).toEqual(["admin"]);

    const groups = expectOk(
      await tenant.admin.projectGroups.list({ params: { projectId: project.id } }),
    ).groupMemberships;
    expect(groups).toHaveLength(1);
    expect(groups[0]!.group.id).toBe(group.id);
    expect(groups[0]!.roles.map((r) => r.customRoleSlug ?? r.role).sort()).toEqual(["import-reader", "viewer"]);

    const managed = expectOk(
      await tenant.admin.projectIdentities.list({ params: { projectId: project.id }, query: {} }),
    ).identities;
    expect(managed.map((i) => [i.name, i.projectId, i.role])).toEqual([["deployer", project.id, "no-access"]]);
    const deployer = expectOk(
      await tenant.admin.projects.getIdentityMembership({
        params: { projectId: project.id, identityId: managed[0]!.id },
      }),
    );
    expect(deployer.identityMembership.roles.map((r) => r.role)).toEqual(["member"]);

    const users = await tenant.app.deps.db
      .selectFrom("project_user_memberships as m")
      .innerJoin("project_user_membership_roles as r", "r.membership_id", "m.id")
      .select(["m.user_id", "r.role"])
      .where("m.project_id", "=", project.id)
      .execute();
    expect(users).toEqual([{ user_id: user.id, role: "viewer" }]);

    // A custom role in use cannot be deleted on its own; everything goes away with the project.
    const inUse = tenant.app.deps.db
      .deleteFrom("project_roles")
      .where("project_id", "=", project.id)
      .where("slug", "=", "import-reader")
      .execute();
    await expect(inUse).rejects.toMatchObject({ code: "23503" });
    expect((await tenant.admin.projects.delete({ params: { projectId: project.id } })).status).toBe(200);
  });

  it("uses the built-in default for `default`, and refuses unknown names (404) and other types (400)", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const withDefault = expectOk(
      await tenant.admin.projects.create({ body: { projectName: "d", template: "default" } }),
    ).project;
    expect(withDefault.environments.map((e) => e.slug)).toEqual(["dev", "staging", "prod"]);
    const missing = await tenant.admin.projects.create({ body: { projectName: "m", template: "no-such-template" } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: "Project template with name no-such-template not found" });
    const foreign = expectOk(
      await other.admin.projectTemplates.create({ body: { name: uniqueName("foreign"), type: "secret-manager" } }),
    ).projectTemplate;
    expect((await tenant.admin.projects.create({ body: { projectName: "f", template: foreign.name } })).status).toBe(
      404,
    );
    const pki = expectOk(
      await tenant.admin.projectTemplates.create({ body: { name: uniqueName("pki"), type: "cert-manager" } }),
    ).projectTemplate;
    const wrongType = await tenant.admin.projects.create({ body: { projectName: "w", template: pki.name } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({
      message: `Project template "${pki.name}" is of type cert-manager and cannot be used for a secret-manager project`,
    });
    const certProject = expectOk(
      await tenant.admin.projects.create({ body: { projectName: "c", type: "cert-manager", template: pki.name } }),
    ).project;
    expect(certProject.environments).toEqual([]);
  });
});
