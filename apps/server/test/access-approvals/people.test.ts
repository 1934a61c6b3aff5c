import type { AccessRequestPermission } from "@keyward/contract";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, signIn } from "../sso/sso-helpers";
import { createFixture, listed, readSecret, requestAccess, review, type Fixture } from "./helpers";

describe("access requests of people", () => {
  let tenant: Tenant;
  let f: Fixture;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
    f = await createFixture(tenant);
  });

  /** A signed-in person in the fixture's project with a role, and their project membership. */
  const person = async (role: string) => {
    const email = `${uniqueName("person")}@example.test`;
    const session = await signIn(tenant, { sub: `sub-${email}`, email });
    const params = { projectId: f.project.id };
    expectOk(await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [email], roleSlugs: [role] } }));
    const membership = expectOk(await tenant.admin.users.listProjectMemberships({ params })).memberships.find(
      (m) => m.user.email === email,
    )!;
    return { email, client: session.client, membership };
  };

  it("a person asks, a person named by username and one in an approving group grant, an approver revokes", async () => {
    const [alice, bob, carol] = [await person("no-access"), await person("admin"), await person("admin")];
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("approvers") } }));
    expectOk(await tenant.admin.groups.addUser({ params: { id: group.id, username: carol.membership.user.username } }));
    expectOk(
      await tenant.admin.projectGroups.add({ params: { projectId: f.project.id, groupIdOrName: group.id }, body: {} }),
    );
    expectOk(
      await tenant.admin.accessApprovalPolicies.create({
        body: {
          projectSlug: f.project.slug,
          environment: "dev",
          approvers: [
            { type: "user", username: bob.membership.user.username },
            { type: "group", id: group.id },
          ],
          approvals: 2,
        },
      }),
    );

    expect(await readSecret(alice, f)).toBe(403);
    const { approval } = expectOk(await requestAccess(alice, f, { isTemporary: true, temporaryRange: "1h" }));
    expect(approval).toMatchObject({
      requesterType: "user",
      requestedByUserId: alice.membership.userId,
      requestedByUser: { email: alice.email },
      requestedByIdentity: null,
    });
    // A project member who approves nothing is not a reviewer.
    expect((await review(f.approvers[0], approval.id, "approved")).status).toBe(403);
    expect(expectOk(await review(bob, approval.id, "approved")).review).toMatchObject({
      reviewerType: "user",
      userId: bob.membership.userId,
    });
    expect(await readSecret(alice, f)).toBe(403);
    expectOk(await review(carol, approval.id, "approved"));
    expect(await readSecret(alice, f)).toBe(200);

    const request = (await listed(f, approval.id))!;
    expect(request).toMatchObject({ status: "approved", privilege: { membershipId: alice.membership.id } });
    const privileges = expectOk(
      await tenant.admin.userPrivileges.list({ query: { projectMembershipId: alice.membership.id } }),
    ).privileges;
    expect(privileges).toEqual([
      expect.objectContaining({ id: request.privilege!.id, isLinkedToAccessApproval: true }),
    ]);
    const params = { privilegeId: request.privilege!.id };
    expect((await tenant.admin.userPrivileges.update({ params, body: { slug: "renamed" } })).status).toBe(400);
    expect((await tenant.admin.userPrivileges.delete({ params })).status).toBe(400);
    expect(await readSecret(alice, f)).toBe(200);

    const revoked = expectOk(await bob.client.accessApprovalRequests.revoke({ params: { requestId: approval.id } }));
    expect(revoked.request).toMatchObject({ status: "revoked", revokedByUserId: bob.membership.userId });
    expect(await readSecret(alice, f)).toBe(403);
  });

  it("a person approves an identity's request", async () => {
    const dave = await person("admin");
    expectOk(
      await tenant.admin.accessApprovalPolicies.create({
        body: {
          projectSlug: f.project.slug,
          name: uniqueName("by-dave"),
          environment: "staging",
          approvers: [{ type: "user", id: dave.membership.userId }],
        },
      }),
    );
    const permissions: AccessRequestPermission[] = [["read", "secrets", { environment: "staging", secretPath: "/" }]];
    const { approval } = expectOk(await requestAccess(f.requester, f, { permissions, isTemporary: false }));
    expectOk(await review(dave, approval.id, "approved"));
    expect(await listed(f, approval.id)).toMatchObject({
      status: "approved",
      requesterType: "identity",
      reviewers: [{ reviewerType: "user", userId: dave.membership.userId, status: "approved" }],
    });
  });
});
