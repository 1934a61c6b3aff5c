import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

/**
 * A member may edit identities but holds no `role: create`; it must not remove or re-time a
 * privilege that grants it, since either changes what the target can do beyond the member's reach.
 */
describe("privileges holding more than the caller", () => {
  it("cannot be deleted or re-timed by the less privileged caller (403), but can by an admin", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    const target = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const { privilege } = expectOk(
      await tenant.admin.privileges.v2.create({
        body: {
          identityId: target.id,
          projectId: project.id,
          slug: "role-maker",
          permissions: [{ subject: "role", action: ["create"] }],
          type: {
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "1s",
            temporaryAccessStartTime: new Date(Date.now() - 60_000).toISOString(),
          },
        },
      }),
    );

    const retime = await member.client.privileges.v2.update({
      params: { id: privilege.id },
      body: { slug: "role-maker", type: { isTemporary: false } },
    });
    expect(retime.status).toBe(403);
    expect(retime.body).toMatchObject({ error: "PermissionBoundaryError" });

    const removed = await member.client.privileges.v2.delete({ params: { id: privilege.id } });
    expect(removed.status).toBe(403);
    expect(removed.body).toMatchObject({ error: "PermissionBoundaryError" });

    // The privilege is still there, still expired, and the admin can remove it.
    const still = expectOk(await tenant.admin.privileges.v2.get({ params: { id: privilege.id } }));
    expect(still.privilege.isTemporary).toBe(true);
    expectOk(await tenant.admin.privileges.v2.delete({ params: { id: privilege.id } }));
  });
});
