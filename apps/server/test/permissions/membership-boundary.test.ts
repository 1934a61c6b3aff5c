import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant } from "../helpers/tenant";

/**
 * A member holds edit and delete on identity, but not what an admin holds: it must not be able to
 * strip or remove a more privileged identity (the grant boundary, applied to the target's
 * current permissions, as Infisical does for membership updates and deletes).
 */
describe("membership changes of a more privileged identity", () => {
  it("refuses a member demoting or removing an admin (403 PermissionBoundaryError), allows it for a peer", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    const admin = await createIdentity(tenant, { projectId: project.id, projectRole: "admin" });
    const peer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });

    const demote = await member.client.projects.updateIdentityMembership({
      params: { projectId: project.id, identityId: admin.id },
      body: { roles: [{ role: "no-access", isTemporary: false }] },
    });
    expect(demote.status).toBe(403);
    expect(demote.body).toMatchObject({ error: "PermissionBoundaryError" });

    const remove = await member.client.projects.deleteIdentityMembership({
      params: { projectId: project.id, identityId: admin.id },
    });
    expect(remove.status).toBe(403);
    expect(remove.body).toMatchObject({ error: "PermissionBoundaryError" });

    // The admin keeps its access.
    expect((await admin.client.projects.listEnvironments({ params: { projectId: project.id } })).status).toBe(200);
    const roles = await tenant.admin.projects.getIdentityMembership({
      params: { projectId: project.id, identityId: admin.id },
    });
    expect(roles.status === 200 && roles.body.identityMembership.roles.map((r) => r.role)).toEqual(["admin"]);

    // An identity within the member's reach may still be changed and removed.
    const changed = await member.client.projects.updateIdentityMembership({
      params: { projectId: project.id, identityId: peer.id },
      body: { roles: [{ role: "member", isTemporary: false }] },
    });
    expect(changed.status).toBe(200);
    expect(
      (
        await member.client.projects.deleteIdentityMembership({
          params: { projectId: project.id, identityId: peer.id },
        })
      ).status,
    ).toBe(200);
  });
});
