import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import {
  createPolicy,
  fixturesInOneTenant,
  listed,
  privilegeCount,
  readSecret,
  requestAccess,
  review,
} from "./helpers";

/** A fresh project per test: requests of one project do not disturb another's counts and guards. */
describe("access requests: who may approve, guards and ends", () => {
  const fixture = fixturesInOneTenant();

  it("an approval counts only while its approver still holds the access and is still an approver", async () => {
    const f = await fixture();
    const third = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "admin" });
    const fourth = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "admin" });
    const policy = await createPolicy(f, {
      approvals: 2,
      approvers: [...f.approvers, third, fourth].map((a) => ({ type: "identity" as const, id: a.id })),
    });
    const { approval } = expectOk(await requestAccess(f.requester, f));
    expectOk(await review(f.approvers[0], approval.id, "approved"));
    expectOk(await review(f.approvers[1], approval.id, "approved"));
    // Both approvals counted at once: approved.
    expect((await listed(f, approval.id))?.status).toBe("approved");

    const second = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "no-access" });
    const { approval: next } = expectOk(await requestAccess(second, f));
    expectOk(await review(third, next.id, "approved"));
    // The first approver loses the access it vouched for: its approval no longer counts.
    expectOk(
      await f.tenant.admin.projects.updateIdentityMembership({
        params: { projectId: f.project.id, identityId: third.id },
        body: { roles: [{ role: "viewer" }] },
      }),
    );
    expectOk(await review(fourth, next.id, "approved"));
    expect((await listed(f, next.id))?.status).toBe("pending");
    expect(await privilegeCount(f, next.id)).toBe(0);
    // Nor does one whom the policy no longer names.
    expectOk(
      await f.tenant.admin.accessApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { approvers: [f.approvers[0], f.approvers[1]].map((a) => ({ type: "identity" as const, id: a.id })) },
      }),
    );
    expectOk(await review(f.approvers[0], next.id, "approved"));
    expect((await listed(f, next.id))?.status).toBe("pending");
    expectOk(await review(f.approvers[1], next.id, "approved"));
    expect((await listed(f, next.id))?.status).toBe("approved");
    expect(await readSecret(second, f)).toBe(200);
  });

  it("refuses self-approval unless the policy allows it", async () => {
    const f = await fixture();
    await createPolicy(f, {
      approvers: [
        { type: "identity", id: f.requester.id },
        { type: "identity", id: f.approvers[0].id },
      ],
    });
    const { approval } = expectOk(await requestAccess(f.requester, f));
    const self = await review(f.requester, approval.id, "approved");
    expect(self.status).toBe(403);
    expect(self.body).toMatchObject({ message: expect.stringContaining("your own access request") });

    const g = await fixture();
    await createPolicy(g, {
      allowedSelfApprovals: true,
      approvers: [{ type: "identity", id: g.requester.id }],
    });
    const own = expectOk(await requestAccess(g.requester, g)).approval;
    // Allowed to review itself, the requester still cannot approve access it does not hold.
    const approve = await review(g.requester, own.id, "approved");
    expect(approve.status).toBe(403);
    expect(approve.body).toMatchObject({ error: "PermissionBoundaryError" });
    expect(expectOk(await review(g.requester, own.id, "rejected")).review.status).toBe("rejected");
  });

  it("an approver approves only what they hold", async () => {
    const f = await fixture();
    const viewer = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "viewer" });
    await createPolicy(f, {
      approvers: [
        { type: "identity", id: viewer.id },
        { type: "identity", id: f.approvers[0].id },
      ],
    });
    const { approval } = expectOk(
      await requestAccess(f.requester, f, {
        permissions: [["read,edit", "secrets", { environment: "dev", secretPath: "/" }]],
      }),
    );
    const refused = await review(viewer, approval.id, "approved");
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: "PermissionBoundaryError",
      details: {
        missingPermissions: expect.arrayContaining([
          expect.objectContaining({ action: "edit", subject: "secrets" }),
        ]) as unknown,
      },
    });
    expect(await privilegeCount(f, approval.id)).toBe(0);
    // Rejecting needs no rights beyond being an approver.
    expect(expectOk(await review(viewer, approval.id, "rejected")).review.status).toBe("rejected");
  });

  it("guards: duplicates, access already held, no policy, mixed places, outsiders, reviewers and bypass", async () => {
    const f = await fixture();
    const policy = await createPolicy(f);
    const { approval } = expectOk(await requestAccess(f.requester, f));
    const duplicate = await requestAccess(f.requester, f);
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({
      message: "You already have a pending access request with the same criteria",
    });
    const held = await requestAccess(f.approvers[0], f);
    expect(held.status).toBe(400);
    expect(held.body).toMatchObject({ message: "You already have an active privilege with the same criteria" });
    const noPolicy = await requestAccess(f.requester, f, {
      permissions: [["read", "secrets", { environment: "prod", secretPath: "/" }]],
    });
    expect(noPolicy.status).toBe(400);
    const mixed = await requestAccess(f.requester, f, {
      permissions: [
        ["read", "secrets", { environment: "dev", secretPath: "/" }],
        ["read", "secrets", { environment: "staging", secretPath: "/" }],
      ],
    });
    expect(mixed.status).toBe(400);
    const badAction = await requestAccess(f.requester, f, {
      permissions: [["destroy", "secrets", { environment: "dev" }]] as never,
    });
    expect(badAction.status).toBe(422);
    const outsider = await createIdentity(f.tenant);
    expect((await requestAccess(outsider, f)).status).toBe(403);
    expect(
      (await f.requester.client.accessApprovalRequests.count({ query: { projectSlug: f.project.slug } })).status,
    ).toBe(200);

    // Only the policy's approvers review; only listed bypassers of a soft policy bypass.
    const member = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "admin" });
    const notApprover = await review(member, approval.id, "approved");
    expect(notApprover.status).toBe(403);
    const hardBypass = await review(f.approvers[0], approval.id, "approved", "urgent");
    expect(hardBypass.status).toBe(403);
    expect(hardBypass.body).toMatchObject({ message: "You are not permitted to bypass approval on this request" });
    expectOk(
      await f.tenant.admin.accessApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { enforcementLevel: "soft", approvals: 2, bypassers: [{ type: "identity", id: member.id }] },
      }),
    );
    expect((await review(f.approvers[0], approval.id, "approved", "urgent")).status).toBe(403);
    const bypassed = expectOk(await review(member, approval.id, "approved", "incident 42")).review;
    expect(bypassed).toMatchObject({ status: "approved", bypassReason: "incident 42" });
    expect(await listed(f, approval.id)).toMatchObject({ status: "approved" });
    expect(await readSecret(f.requester, f)).toBe(200);

    const other = await createTenant();
    const params = { requestId: approval.id };
    expect((await review({ client: other.admin }, approval.id, "approved")).status).toBe(404);
    expect((await other.admin.accessApprovalRequests.revoke({ params })).status).toBe(404);
    expect((await other.admin.accessApprovalRequests.list({ query: { projectSlug: f.project.slug } })).status).toBe(
      404,
    );
    expect((await review({ client: f.tenant.admin }, "not-an-id", "approved")).status).toBe(404);
  });

  it("a request past its window expires; a policy that no longer covers it refuses reviews", async () => {
    const f = await fixture();
    const policy = await createPolicy(f);
    const { approval } = expectOk(await requestAccess(f.requester, f, { isTemporary: true, temporaryRange: "1s" }));
    await sleep(1200);
    const expired = await review(f.approvers[0], approval.id, "approved");
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ message: "This access request has expired and can no longer be reviewed" });
    expect((await listed(f, approval.id))?.status).toBe("expired");
    // An expired request is no duplicate.
    const { approval: next } = expectOk(await requestAccess(f.requester, f));

    const params = { policyId: policy.id };
    expectOk(await f.tenant.admin.accessApprovalPolicies.update({ params, body: { secretPath: "/other/**" } }));
    const path = await review(f.approvers[0], next.id, "approved");
    expect(path.status).toBe(400);
    expect(path.body).toMatchObject({ message: "The policy no longer covers secret path '/'." });
    expectOk(
      await f.tenant.admin.accessApprovalPolicies.update({
        params,
        body: { secretPath: "/", environments: ["staging"] },
      }),
    );
    const env = await review(f.approvers[0], next.id, "approved");
    expect(env.status).toBe(400);
    expect(env.body).toMatchObject({ message: "The policy is no longer attached to environment 'dev'." });
  });

  it("a request waits no longer than the policy's expiration time", async () => {
    const f = await fixture();
    const policy = await createPolicy(f, { requestExpirationTime: "1s" });
    expect(policy.requestExpirationTime).toBe("1s");
    const { approval } = expectOk(await requestAccess(f.requester, f));
    await sleep(1200);
    const expired = await review(f.approvers[0], approval.id, "approved");
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ message: "This access request has expired and can no longer be reviewed" });
    expect(
      await f.tenant.admin.accessApprovalRequests.count({ query: { projectSlug: f.project.slug } }).then(expectOk),
    ).toEqual({ pendingCount: 0, finalizedCount: 1 });
  });

  it("deleting the policy revokes its approved requests and closes its pending ones to review", async () => {
    const f = await fixture();
    const policy = await createPolicy(f);
    const approved = expectOk(await requestAccess(f.requester, f)).approval;
    expectOk(await review(f.approvers[0], approved.id, "approved"));
    const second = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "no-access" });
    const pending = expectOk(await requestAccess(second, f)).approval;
    expect(await readSecret(f.requester, f)).toBe(200);

    expectOk(await f.tenant.admin.accessApprovalPolicies.delete({ params: { policyId: policy.id } }));
    expect(await readSecret(f.requester, f)).toBe(403);
    expect(await listed(f, approved.id)).toMatchObject({
      status: "revoked",
      policyId: null,
      privilege: null,
      policy: { id: policy.id, deletedAt: expect.any(String) as string },
    });
    const closed = await review(f.approvers[0], pending.id, "approved");
    expect(closed.status).toBe(400);
    expect(closed.body).toMatchObject({ message: "The policy associated with this access request has been deleted." });
  });

  it("only the project's members see its requests", async () => {
    const f = await fixture();
    await createPolicy(f);
    const otherProject = await createProject(f.tenant);
    const stranger = await createIdentity(f.tenant, { projectId: otherProject.id, projectRole: "admin" });
    expect((await stranger.client.accessApprovalRequests.list({ query: { projectSlug: f.project.slug } })).status).toBe(
      403,
    );
    expect(
      (await stranger.client.accessApprovalRequests.count({ query: { projectSlug: f.project.slug, envSlug: "dev" } }))
        .status,
    ).toBe(403);
    expect(
      (await f.tenant.anonymous.accessApprovalRequests.list({ query: { projectSlug: uniqueName("p") } })).status,
    ).toBe(401);
  });
});
