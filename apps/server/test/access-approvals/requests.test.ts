import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createIdentity, expectOk } from "../helpers/tenant";
import {
  createFixture,
  createPolicy,
  fixturesInOneTenant,
  type Fixture,
  listed,
  privilegeCount,
  readSecret,
  requestAccess,
  review,
} from "./helpers";

/** A fresh project per test: requests of one project do not disturb another's counts and guards. */
describe("access requests", () => {
  const fixture = fixturesInOneTenant();

  it("two of two approvers grant an identity access, listed with its reviews and privilege", async () => {
    const f = await fixture();
    await createPolicy(f, { approvals: 2 });
    expect(await readSecret(f.requester, f)).toBe(403);
    const { approval } = expectOk(await requestAccess(f.requester, f));
    expect(approval).toMatchObject({
      status: "pending",
      isApproved: false,
      projectId: f.project.id,
      environment: "dev",
      secretPath: "/",
      requesterType: "identity",
      requestedByIdentityId: f.requester.id,
      requestedByIdentity: { identityId: f.requester.id },
      requestedByUser: null,
      privilege: null,
      reviewers: [],
      permissions: [["read", "secrets", { environment: "dev", secretPath: { $glob: "/" } }]],
    });
    const counts = () =>
      f.tenant.admin.accessApprovalRequests.count({ query: { projectSlug: f.project.slug } }).then(expectOk);
    expect(await counts()).toEqual({ pendingCount: 1, finalizedCount: 0 });

    const first = expectOk(await review(f.approvers[0], approval.id, "approved")).review;
    expect(first).toMatchObject({ requestId: approval.id, status: "approved", identityId: f.approvers[0].id });
    expect((await listed(f, approval.id))?.status).toBe("pending");
    expect(await readSecret(f.requester, f)).toBe(403);
    // One reviewer counts once.
    const again = await review(f.approvers[0], approval.id, "approved");
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "You have already reviewed this request" });

    expectOk(await review(f.approvers[1], approval.id, "approved"));
    const done = await listed(f, approval.id);
    expect(done).toMatchObject({
      status: "approved",
      isApproved: true,
      approvedAt: expect.any(String) as string,
      privilege: { isTemporary: false, temporaryAccessEndTime: null },
    });
    expect(done?.reviewers.map((r) => r.identityId).sort()).toEqual(f.approvers.map((a) => a.id).sort());
    expect(await counts()).toEqual({ pendingCount: 0, finalizedCount: 1 });
    expect(await readSecret(f.requester, f)).toBe(200);
    expect(await privilegeCount(f, approval.id)).toBe(1);

    // The requester sees its own requests; filters by author and environment.
    const mine = expectOk(
      await f.requester.client.accessApprovalRequests.list({ query: { projectSlug: f.project.slug } }),
    ).requests;
    expect(mine.map((r) => r.id)).toEqual([approval.id]);
    const memberships = await f.tenant.app.deps.db
      .selectFrom("identity_project_memberships")
      .select("id")
      .where("identity_id", "=", f.requester.id)
      .where("project_id", "=", f.project.id)
      .executeTakeFirstOrThrow();
    const byAuthor = expectOk(
      await f.tenant.admin.accessApprovalRequests.list({
        query: { projectSlug: f.project.slug, authorProjectMembershipId: memberships.id, envSlug: "dev" },
      }),
    ).requests;
    expect(byAuthor.map((r) => r.id)).toEqual([approval.id]);
    const otherEnv = expectOk(
      await f.tenant.admin.accessApprovalRequests.list({ query: { projectSlug: f.project.slug, envSlug: "prod" } }),
    ).requests;
    expect(otherEnv).toEqual([]);

    // The privilege belongs to the request: the privilege routes neither change nor delete it.
    const privilegeId = done!.privilege!.id;
    const update = await f.tenant.admin.privileges.v2.update({
      params: { id: privilegeId },
      body: { slug: "renamed", type: { isTemporary: false } },
    });
    expect(update.status).toBe(400);
    expect((await f.tenant.admin.privileges.v2.delete({ params: { id: privilegeId } })).status).toBe(400);
    expect(await readSecret(f.requester, f)).toBe(200);

    // Later reviews find it closed.
    const late = await review(f.approvers[0], approval.id, "rejected");
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ message: "The request has been closed" });
  });

  it("a rejection closes the request and grants nothing", async () => {
    const f = await fixture();
    await createPolicy(f, { approvals: 2 });
    const { approval } = expectOk(await requestAccess(f.requester, f));
    expectOk(await review(f.approvers[0], approval.id, "approved"));
    expect(expectOk(await review(f.approvers[1], approval.id, "rejected")).review.status).toBe("rejected");
    expect(await listed(f, approval.id)).toMatchObject({ status: "rejected", privilege: null });
    expect(await privilegeCount(f, approval.id)).toBe(0);
    expect(await readSecret(f.requester, f)).toBe(403);
    const closed = await review(f.approvers[0], approval.id, "approved");
    expect(closed.status).toBe(400);
    expect(closed.body).toMatchObject({ message: "The request has been closed" });
    const revoke = await f.tenant.admin.accessApprovalRequests.revoke({ params: { requestId: approval.id } });
    expect(revoke.status).toBe(400);
    expect(revoke.body).toMatchObject({ message: "Only approved requests can be revoked" });
    // Once closed, the same request may be made again.
    expect((await requestAccess(f.requester, f)).status).toBe(200);
  });

  it("grants access for the requested range only: it ends on time", async () => {
    const f = await fixture();
    await createPolicy(f, { approvals: 1 });
    const { approval } = expectOk(await requestAccess(f.requester, f, { isTemporary: true, temporaryRange: "2s" }));
    expect(approval).toMatchObject({ isTemporary: true, temporaryRange: "2s" });
    expectOk(await review(f.approvers[0], approval.id, "approved"));
    expect(await readSecret(f.requester, f)).toBe(200);
    const privilege = (await listed(f, approval.id))!.privilege!;
    expect(privilege).toMatchObject({ isTemporary: true, temporaryMode: "relative", temporaryRange: "2s" });
    const start = Date.parse(privilege.temporaryAccessStartTime!);
    const end = Date.parse(privilege.temporaryAccessEndTime!);
    expect(end - start).toBe(2000);
    let refusedAt: number | undefined;
    while (Date.now() < end + 3000) {
      const status = await readSecret(f.requester, f);
      if (status === 403) {
        refusedAt = Date.now();
        break;
      }
      expect(status).toBe(200);
      await sleep(100);
    }
    expect(refusedAt).toBeDefined();
    expect(Math.abs(refusedAt! - end)).toBeLessThanOrEqual(1000);
  });

  it("a range asked without isTemporary still ends, and the longest access a policy allows is kept", async () => {
    const f = await fixture();
    await createPolicy(f, { maxTimePeriod: "1h" });
    const tooLong = await requestAccess(f.requester, f, { isTemporary: true, temporaryRange: "2h" });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ message: "Requested access time range is limited to 1h by policy" });
    const permanent = await requestAccess(f.requester, f, { isTemporary: false });
    expect(permanent.status).toBe(400);
    expect(permanent.body).toMatchObject({ message: "Requested access time range is limited to 1h by policy" });
    const noRange = await requestAccess(f.requester, f, { isTemporary: true });
    expect(noRange.status).toBe(400);
    expect(noRange.body).toMatchObject({ message: "A temporary range is required for temporary requests" });

    const { approval } = expectOk(await requestAccess(f.requester, f, { isTemporary: false, temporaryRange: "30m" }));
    expectOk(await review(f.approvers[0], approval.id, "approved"));
    const privilege = (await listed(f, approval.id))!.privilege!;
    expect(privilege.isTemporary).toBe(true);
    expect(Date.parse(privilege.temporaryAccessEndTime!) - Date.parse(privilege.temporaryAccessStartTime!)).toBe(
      30 * 60_000,
    );
  });

  it("revoking ends the access at once, once", async () => {
    const f = await fixture();
    await createPolicy(f);
    const { approval } = expectOk(await requestAccess(f.requester, f));
    expectOk(await review(f.approvers[0], approval.id, "approved"));
    expect(await readSecret(f.requester, f)).toBe(200);
    // Neither a stranger to the request nor a member without the right revokes it.
    const member = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "member" });
    expect((await member.client.accessApprovalRequests.revoke({ params: { requestId: approval.id } })).status).toBe(
      403,
    );
    const { request } = expectOk(
      await f.approvers[1].client.accessApprovalRequests.revoke({ params: { requestId: approval.id } }),
    );
    expect(request).toMatchObject({
      id: approval.id,
      status: "revoked",
      privilegeId: null,
      privilege: null,
      revokedByIdentityId: f.approvers[1].id,
      revokedAt: expect.any(String) as string,
    });
    expect(await readSecret(f.requester, f)).toBe(403);
    expect(await privilegeCount(f, approval.id)).toBe(0);
    const twice = await f.tenant.admin.accessApprovalRequests.revoke({ params: { requestId: approval.id } });
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ message: "Only approved requests can be revoked" });
  });

  it("two approvers approving at once grant one privilege", async () => {
    const f = await fixture();
    await createPolicy(f, { approvals: 2 });
    const { approval } = expectOk(await requestAccess(f.requester, f));
    const results = await Promise.all(f.approvers.map((who) => review(who, approval.id, "approved")));
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(await privilegeCount(f, approval.id)).toBe(1);
    expect((await listed(f, approval.id))?.status).toBe("approved");
    expect(await readSecret(f.requester, f)).toBe(200);
  });
});

describe("the inbox of access requests (reviewable)", () => {
  it("lists only the requests whose policy names the caller as an approver, even for one who reads every request", async () => {
    const f = await createFixture();
    await createPolicy(f, { approvers: [{ type: "identity", id: f.approvers[0].id }] });
    const asked = expectOk(await requestAccess(f.requester, f)).approval;
    const inbox = async (who: { client: Fixture["tenant"]["admin"] }) =>
      expectOk(
        await who.client.accessApprovalRequests.list({ query: { projectSlug: f.project.slug, reviewable: "true" } }),
      ).requests.map((r) => r.id);
    expect(await inbox(f.approvers[0])).toEqual([asked.id]);
    // An admin who is not an approver sees the request in the list, not in their inbox.
    expect(await inbox(f.approvers[1])).toEqual([]);
    expect(await listed(f, asked.id)).toBeDefined();
    // The requester sees their own request, but it waits for no review of theirs.
    expect(await inbox(f.requester)).toEqual([]);
    expect(
      expectOk(
        await f.requester.client.accessApprovalRequests.list({ query: { projectSlug: f.project.slug } }),
      ).requests.map((r) => r.id),
    ).toEqual([asked.id]);
    expect(
      (
        await f.requester.client.accessApprovalRequests.list({
          query: { projectSlug: f.project.slug, reviewable: "yes" as "true" },
        })
      ).status,
    ).toBe(422);
  });
});
