import type { ProjectPermissionRule } from "@keyward/contract";
import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";

/** Reads and writes secrets under /app in dev, never edits the ROOT_* ones. */
const RULES: ProjectPermissionRule[] = [
  {
    subject: "secrets",
    action: ["describeSecret", "readValue", "edit"],
    conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
  },
  { subject: "secrets", action: ["edit"], inverted: true, conditions: { secretName: { $glob: "ROOT_*" } } },
  { subject: "secret-folders", action: ["read"] },
];

describe("the caller's own permissions in a project (GET /api/v1/workspace/:projectId/permissions)", () => {
  it("answers a member's rules packed as CASL packs them, and its membership", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { role } = expectOk(
      await tenant.admin.roles.create({
        params: { projectId: project.id },
        body: { slug: uniqueName("app-dev"), name: "App in dev", permissions: RULES },
      }),
    );
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: role.slug });
    const { data } = expectOk(await member.client.projects.myPermissions({ params: { projectId: project.id } }));
    expect(data.permissions).toEqual([
      ["describeSecret,readValue,edit", "secrets", { environment: "dev", secretPath: { $glob: "/app/**" } }],
      ["edit", "secrets", { secretName: { $glob: "ROOT_*" } }, 1],
      ["read", "secret-folders"],
    ]);
    expect(data.membership.projectId).toBe(project.id);
    const { identityMembership } = expectOk(
      await tenant.admin.projects.getIdentityMembership({ params: { projectId: project.id, identityId: member.id } }),
    );
    expect(data.membership.id).toBe(identityMembership.id);

    // The project's admin holds the admin role's rules, without conditions.
    const admin = expectOk(await tenant.admin.projects.myPermissions({ params: { projectId: project.id } })).data;
    expect(admin.permissions.length).toBeGreaterThan(RULES.length);
    expect(admin.permissions).toContainEqual(expect.arrayContaining(["secrets"]));
  });

  it("refuses one who is not a member (403), another organization's project (404) and no token (401)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const outsider = await createIdentity(tenant);
    expect(await outsider.client.projects.myPermissions({ params: { projectId: project.id } })).toMatchObject({
      status: 403,
    });
    const other = await createTenant();
    expect(await other.admin.projects.myPermissions({ params: { projectId: project.id } })).toMatchObject({
      status: 404,
      body: { message: `Project with ${project.id} not found` },
    });
    expect((await tenant.anonymous.projects.myPermissions({ params: { projectId: project.id } })).status).toBe(401);
  });
});
