import { describe, expect, it } from "vitest";
import { insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";

/** A group manager may manage groups within its reach, not demote or remove a group holding admin. */
describe("project group changes of a more privileged group", () => {
  it("refuses demoting or removing an admin group (403), allows it for a viewer group", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const roleSlug = await insertCustomRole(tenant, project.id, [
      { subject: "groups", action: ["read", "create", "edit", "delete"], inverted: false },
      { subject: "secrets", action: ["read"], inverted: false },
    ]);
    const manager = await createIdentity(tenant, { projectId: project.id, projectRole: roleSlug });
    const adminGroup = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("admins") } }));
    const viewerGroup = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("viewers") } }));
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: adminGroup.id },
        body: { role: "admin" },
      }),
    );
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: viewerGroup.id },
        body: { role: "no-access" },
      }),
    );

    const demote = await manager.client.projectGroups.update({
      params: { projectId: project.id, groupId: adminGroup.id },
      body: { roles: [{ role: "no-access", isTemporary: false }] },
    });
    expect(demote.status, JSON.stringify(demote.body)).toBe(403);
    expect(demote.body).toMatchObject({ error: "PermissionBoundaryError" });
    const remove = await manager.client.projectGroups.remove({
      params: { projectId: project.id, groupId: adminGroup.id },
    });
    expect(remove.status).toBe(403);
    const still = expectOk(
      await tenant.admin.projectGroups.get({ params: { projectId: project.id, groupId: adminGroup.id } }),
    );
    expect(still.groupMembership.roles.map((r) => r.role)).toEqual(["admin"]);

    expectOk(await manager.client.projectGroups.remove({ params: { projectId: project.id, groupId: viewerGroup.id } }));
  });
});
