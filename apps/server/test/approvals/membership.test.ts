import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, signIn } from "../sso/sso-helpers";
import { createFixture, readSecret, requestAccess, review } from "../access-approvals/helpers";
import { propose } from "../secret-approvals/helpers";

/**
 * Both kinds of approval policy name approvers by one rule: a person or an identity who is a member
 * of the project directly or through a group of the project, a group by its own membership, a person
 * by username or e-mail without regard to case.
 */
describe("who may be named an approver, on access policies and change policies alike", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
  });

  /** An identity of the organization that is in the project only through a group with `role`. */
  const memberThroughGroup = async (projectId: string, role: string) => {
    const identity = await createIdentity(tenant);
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("through") } }));
    expectOk(await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: identity.id } }));
    expectOk(await tenant.admin.projectGroups.add({ params: { projectId, groupIdOrName: group.id }, body: { role } }));
    return identity;
  };

  it("access requests: an approver in the project only through a group is named and grants", async () => {
    const f = await createFixture(tenant);
    const approver = await memberThroughGroup(f.project.id, "admin");
    const policy = expectOk(
      await tenant.admin.accessApprovalPolicies.create({
        body: {
          projectSlug: f.project.slug,
          environment: "dev",
          approvers: [{ type: "identity", id: approver.id }],
          approvals: 1,
        },
      }),
    ).approval;
    expect(policy.approvers).toEqual([{ type: "identity", id: approver.id, name: expect.any(String) }]);
    const { approval } = expectOk(await requestAccess(f.requester, f));
    expect(await readSecret(f.requester, f)).toBe(403);
    expectOk(await review(approver, approval.id, "approved"));
    expect(await readSecret(f.requester, f)).toBe(200);
  });

  it("change requests: an approver in the project only through a group is named, reviews and merges", async () => {
    const { id: projectId } = await createProject(tenant);
    const approver = await memberThroughGroup(projectId, "viewer");
    const committer = await createIdentity(tenant, { projectId, projectRole: "member" });
    const policy = expectOk(
      await tenant.admin.secretApprovalPolicies.create({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/",
          approvers: [{ type: "identity", id: approver.id }],
          approvals: 1,
        } as never,
      }),
    ).approval;
    expect(policy.approvers).toEqual([{ type: "identity", id: approver.id, name: expect.any(String) }]);
    const request = await propose({ projectId }, committer, "THROUGH_GROUP", "through-a-group");
    expectOk(
      await approver.client.secretApprovalRequests.review({
        params: { requestId: request.id },
        body: { status: "approved" },
      }),
    );
    expectOk(await approver.client.secretApprovalRequests.merge({ params: { requestId: request.id }, body: {} }));
  });

  it("an identity in no group of the project and not a member is refused by both", async () => {
    const f = await createFixture(tenant);
    const outsider = await createIdentity(tenant);
    const access = await tenant.admin.accessApprovalPolicies.create({
      body: { projectSlug: f.project.slug, environment: "dev", approvers: [{ type: "identity", id: outsider.id }] },
    });
    expect(access.status).toBe(400);
    const change = await tenant.admin.secretApprovalPolicies.create({
      body: {
        projectId: f.project.id,
        environment: "dev",
        secretPath: "/",
        approvers: [{ type: "identity", id: outsider.id }],
      } as never,
    });
    expect(change.body).toMatchObject({
      statusCode: 400,
      message: `Invalid approver identity: ${outsider.id} is not a member of the project`,
    });
  });

  it("a person is named by username or e-mail in any case, on both kinds and on groups", async () => {
    const f = await createFixture(tenant);
    const email = `${uniqueName("named")}@example.test`;
    await signIn(tenant, { sub: `sub-${email}`, email });
    const params = { projectId: f.project.id };
    expectOk(
      await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [email], roleSlugs: ["admin"] } }),
    );
    const person = expectOk(await tenant.admin.users.listProjectMemberships({ params })).memberships.find(
      (m) => m.user.email === email,
    )!.user;
    const shouted = email.toUpperCase();
    const access = expectOk(
      await tenant.admin.accessApprovalPolicies.create({
        body: { projectSlug: f.project.slug, environment: "dev", approvers: [{ type: "user", username: shouted }] },
      }),
    ).approval;
    expect(access.approvers).toEqual([{ type: "user", id: person.id, name: person.username }]);
    const change = expectOk(
      await tenant.admin.secretApprovalPolicies.create({
        body: {
          projectId: f.project.id,
          environment: "dev",
          secretPath: "/",
          approvers: [{ type: "user", username: shouted }],
        } as never,
      }),
    ).approval;
    expect(change.approvers).toEqual([{ type: "user", id: person.id, name: person.username }]);
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("shouted") } }));
    expectOk(await tenant.admin.groups.addUser({ params: { id: group.id, username: shouted } }));
    const unknown = await tenant.admin.accessApprovalPolicies.create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        approvers: [{ type: "user", username: `nobody-${email}` }],
      },
    });
    expect(unknown.body).toMatchObject({
      statusCode: 400,
      message: `Approver user nobody-${email} is not a member of the organization`,
    });
  });
});
