import { describe, expect, it } from "vitest";
import { auditEvents, eventTypes } from "../audit/helpers";
import { eventData, isEvent, openEventStream } from "../helpers/event-stream";
import { createIdentity, createTenant, expectOk, type TestIdentity } from "../helpers/tenant";
import { createFolder, insertCustomRole } from "../helpers/structure";
import { asIdentity, member, merge, propose, protect, review, setup, valueOf } from "./helpers";

describe("change requests", () => {
  it("a protected write writes nothing and opens a request; two approvals merge it", async () => {
    const s = await setup();
    await protect(s);
    const request = await propose(s, s.committer, "DB_PASSWORD", "s3cret");
    expect(request).toMatchObject({ status: "open", hasMerged: false });
    expect(await valueOf(s, "DB_PASSWORD")).toBe(404);

    expectOk(await review(s.approverA, request.id, "approved", "ok by me"));
    expect((await merge(s.committer, request.id)).body).toMatchObject({
      statusCode: 400,
      message: "Doesn't have minimum approvals needed",
    });
    expectOk(await review(s.approverB, request.id, "approved"));
    const detail = expectOk(await s.committer.client.secretApprovalRequests.get({ params: { requestId: request.id } }));
    expect(detail.approval.approvalCount).toBe(2);
    expect(detail.approval.commits).toMatchObject([{ op: "create", secretKey: "DB_PASSWORD", secretValue: "s3cret" }]);
    const merged = expectOk(await merge(s.approverA, request.id)).approval;
    expect(merged).toMatchObject({ status: "close", hasMerged: true });
    expect(await valueOf(s, "DB_PASSWORD")).toBe("s3cret");
    expect((await merge(s.approverB, request.id)).body).toMatchObject({ statusCode: 400 });

    const counts = expectOk(await s.tenant.admin.secretApprovalRequests.count({ query: { projectId: s.projectId } }));
    expect(counts.approvals).toEqual({ open: 0, closed: 1 });
  });

  it("the stream hears nothing of a request and the merged change as ordinary secret events; the audit log has each step", async () => {
    const s = await setup();
    await protect(s, { approvals: 1 });
    const stream = await openEventStream(s.tenant.app.baseUrl, s.tenant.adminToken, {
      projectId: s.projectId,
      register: [{ event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/" } }],
    });
    try {
      const request = await propose(s, s.committer, "STREAMED", "v");
      await expect(stream.next(isEvent, 300)).rejects.toThrow();
      expectOk(await review(s.approverA, request.id, "approved"));
      expectOk(await merge(s.approverA, request.id));
      const created = await stream.next(isEvent);
      expect(eventData(created)).toMatchObject({
        data: { eventType: "secret:create", payload: [{ secretKey: "STREAMED" }] },
      });
      const events = await auditEvents(s.tenant, { projectId: s.projectId });
      expect(eventTypes(events).slice(0, 3)).toEqual([
        "secret-approval-merged",
        "secret-approval-request-review",
        "secret-approval-request",
      ]);
      expect(events[2]!.actor).toMatchObject({ type: "identity", metadata: { identityId: s.committer.id } });
      expect(events[2]!.event.metadata).toMatchObject({
        secretApprovalRequestId: request.id,
        secrets: [{ op: "create", secretKey: "STREAMED" }],
      });
      expect(events[0]!.event.metadata).toMatchObject({
        mergedBy: s.approverA.id,
        secrets: [{ secretKey: "STREAMED", secretVersion: 1 }],
      });
      expect(JSON.stringify(events.slice(0, 3))).not.toContain('"v"');
    } finally {
      stream.close();
    }
  });

  it("updates, renames and deletes go through requests too, batch writes as one request", async () => {
    const s = await setup();
    expectOk(
      await s.tenant.admin.secretsV4.batchCreate({
        body: {
          projectId: s.projectId,
          environment: "dev",
          secretPath: "/",
          secrets: [
            { secretKey: "A", secretValue: "1", secretComment: "" },
            { secretKey: "B", secretValue: "2", secretComment: "" },
          ],
        },
      }),
    );
    await protect(s, { approvals: 1 });
    const res = await s.committer.client.secretsV4.batchUpdate({
      body: {
        projectId: s.projectId,
        environment: "dev",
        secretPath: "/",
        secrets: [
          { secretKey: "A", secretValue: "10" },
          { secretKey: "B", newSecretName: "B2" },
        ],
      },
    });
    const request = (res.body as { approval: { id: string } }).approval;
    expect(request.id).toBeDefined();
    const del = await s.committer.client.secretsV4.delete({
      params: { secretName: "A" },
      body: { projectId: s.projectId, environment: "dev", secretPath: "/" },
    });
    const deletion = (del.body as { approval: { id: string } }).approval;
    expect(await valueOf(s, "A")).toBe("1");

    expectOk(await review(s.approverA, request.id, "approved"));
    expectOk(await merge(s.committer, request.id));
    expect(await valueOf(s, "A")).toBe("10");
    expect(await valueOf(s, "B2")).toBe("2");
    expect(await valueOf(s, "B")).toBe(404);

    // The deletion was proposed against version 1 of A: A has moved on, so the merge is a conflict.
    expectOk(await review(s.approverB, deletion.id, "approved"));
    const stale = await merge(s.committer, deletion.id);
    expect(stale.status).toBe(400);
    expect(stale.body).toMatchObject({ message: expect.stringContaining("A (the secret changed since") });
    expect(await valueOf(s, "A")).toBe("10");
    const after = expectOk(await s.committer.client.secretApprovalRequests.get({ params: { requestId: deletion.id } }));
    expect(after.approval).toMatchObject({
      status: "open",
      hasMerged: false,
      conflicts: [{ secretKey: "A", op: "delete" }],
    });

    await createFolder(s.tenant, s.projectId, "dev", "/", "elsewhere");
    const spanning = await s.committer.client.secretsV4.batchUpdate({
      body: {
        projectId: s.projectId,
        environment: "dev",
        secretPath: "/",
        mode: "upsert",
        secrets: [
          { secretKey: "X", secretValue: "x" },
          { secretKey: "Y", secretValue: "y", secretPath: "/elsewhere" },
        ],
      },
    });
    expect(spanning.body).toMatchObject({
      statusCode: 400,
      message: "A change to a protected folder must name that folder alone",
    });
  });

  it("a rejection closes the request; closing and reopening; nothing to review once closed", async () => {
    const s = await setup();
    await protect(s);
    const request = await propose(s, s.committer, "K", "v");
    expectOk(await review(s.approverA, request.id, "rejected", "not now"));
    const detail = expectOk(await s.committer.client.secretApprovalRequests.get({ params: { requestId: request.id } }));
    expect(detail.approval).toMatchObject({ status: "close", reviewers: [{ status: "rejected", comment: "not now" }] });
    expect((await review(s.approverB, request.id, "approved")).body).toMatchObject({
      message: "You can only review open approval requests",
    });
    expect((await merge(s.committer, request.id)).status).toBe(400);
    const status = (who: TestIdentity, value: "open" | "close") =>
      who.client.secretApprovalRequests.status({ params: { requestId: request.id }, body: { status: value } });
    expect(expectOk(await status(s.committer, "open")).approval.status).toBe("open");
    expect((await status(s.committer, "open")).body).toMatchObject({ message: "Approval request is already open" });
    const stranger = await member(s.tenant, s.projectId);
    expect((await status(stranger, "close")).status).toBe(403);
    expect(expectOk(await status(s.approverB, "close")).approval.status).toBe("close");
    expect(await valueOf(s, "K")).toBe(404);
  });

  it("a bypasser of a soft policy merges without approvals, with a reason on record; a hard policy has no bypass", async () => {
    const s = await setup();
    const bypasser = await member(s.tenant, s.projectId);
    const policy = await protect(s, { enforcementLevel: "soft", bypassers: [asIdentity(bypasser)] });
    const request = await propose(s, bypasser, "URGENT", "fix");
    expect((await merge(bypasser, request.id)).body).toMatchObject({
      message: "A reason is required to bypass the approval policy",
    });
    expect((await merge(s.committer, request.id)).status).toBe(403);
    const merged = expectOk(await merge(bypasser, request.id, "production is down")).approval;
    expect(merged).toMatchObject({ hasMerged: true, bypassReason: "production is down" });
    expect(await valueOf(s, "URGENT")).toBe("fix");

    expectOk(
      await s.tenant.admin.secretApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { enforcementLevel: "hard" } as never,
      }),
    );
    const second = await propose(s, bypasser, "URGENT2", "fix");
    expect((await merge(bypasser, second.id, "again")).body).toMatchObject({
      message: "Doesn't have minimum approvals needed",
    });
  });

  it("a committer cannot approve their own request unless the policy allows it", async () => {
    const s = await setup();
    const policy = await protect(s, { approvals: 1 });
    const request = await propose(s, s.approverA, "SELF", "v");
    expect((await review(s.approverA, request.id, "approved")).body).toMatchObject({
      statusCode: 400,
      message: expect.stringContaining("Users are not authorized to review their own request"),
    });
    expect((await review(s.committer, request.id, "approved")).status).toBe(403);
    expectOk(
      await s.tenant.admin.secretApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { allowedSelfApprovals: true },
      }),
    );
    expectOk(await review(s.approverA, request.id, "approved"));
    expectOk(await merge(s.approverA, request.id));
    expect(await valueOf(s, "SELF")).toBe("v");
  });

  it("an approver without read access sees the request but not the values; outsiders see nothing", async () => {
    const s = await setup();
    const blindRole = await insertCustomRole(s.tenant, s.projectId, [
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    const blind = await createIdentity(s.tenant, { projectId: s.projectId, projectRole: blindRole });
    await protect(s, { approvers: [asIdentity(blind), asIdentity(s.approverA)], approvals: 1 });
    const request = await propose(s, s.committer, "HIDDEN", "the-value");
    const seen = expectOk(await blind.client.secretApprovalRequests.get({ params: { requestId: request.id } }));
    expect(seen.approval.commits).toMatchObject([{ secretKey: "HIDDEN", secretValueHidden: true }]);
    expect(JSON.stringify(seen)).not.toContain("the-value");
    const listed = expectOk(
      await blind.client.secretApprovalRequests.list({ query: { projectId: s.projectId, reviewable: "true" } }),
    );
    expect(listed.approvals.map((a) => a.id)).toEqual([request.id]);
    expect(JSON.stringify(listed)).not.toContain("the-value");
    expectOk(await review(blind, request.id, "approved"));
    expectOk(await merge(blind, request.id));
    expect(await valueOf(s, "HIDDEN")).toBe("the-value");

    const outsiderRole = await insertCustomRole(s.tenant, s.projectId, [
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    const outsider = await createIdentity(s.tenant, { projectId: s.projectId, projectRole: outsiderRole });
    expect((await outsider.client.secretApprovalRequests.get({ params: { requestId: request.id } })).status).toBe(403);
    const own = expectOk(await outsider.client.secretApprovalRequests.list({ query: { projectId: s.projectId } }));
    expect(own.totalCount).toBe(0);
    const other = await createTenant();
    expect((await other.admin.secretApprovalRequests.get({ params: { requestId: request.id } })).status).toBe(404);
    expect((await review(await createIdentity(other), request.id, "approved")).status).toBe(404);
  });

  it("a write the committer may not make opens no request; machines pass when the policy lets them", async () => {
    const s = await setup();
    const readerRole = await insertCustomRole(s.tenant, s.projectId, [
      { subject: "secrets", action: ["describeSecret", "readValue"], inverted: false },
    ]);
    const reader = await createIdentity(s.tenant, { projectId: s.projectId, projectRole: readerRole });
    const policy = await protect(s);
    const refused = await reader.client.secretsV4.create({
      params: { secretName: "NOPE" },
      body: { projectId: s.projectId, environment: "dev", secretPath: "/", secretValue: "v" },
    });
    expect(refused.status).toBe(403);
    const counts = expectOk(await s.tenant.admin.secretApprovalRequests.count({ query: { projectId: s.projectId } }));
    expect(counts.approvals).toEqual({ open: 0, closed: 0 });
    expectOk(
      await s.tenant.admin.secretApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { bypassForMachineIdentities: true },
      }),
    );
    const direct = expectOk(
      await s.committer.client.secretsV4.create({
        params: { secretName: "DIRECT" },
        body: { projectId: s.projectId, environment: "dev", secretPath: "/", secretValue: "v" },
      }),
    );
    expect("secret" in direct).toBe(true);
  });

  it("a rollback in a protected folder opens a change request; a move into or out of one is refused", async () => {
    const s = await setup();
    const created = expectOk(
      await s.tenant.admin.secretsV4.create({
        params: { secretName: "MOVABLE" },
        body: { projectId: s.projectId, environment: "staging", secretPath: "/", secretValue: "1" },
      }),
    );
    if (!("secret" in created)) throw new Error("staging is not protected");
    expectOk(
      await s.tenant.admin.secretsV4.update({
        params: { secretName: "MOVABLE" },
        body: { projectId: s.projectId, environment: "staging", secretPath: "/", secretValue: "2" },
      }),
    );
    const policy = await protect(s, { approvals: 1 });
    expectOk(
      await s.tenant.admin.secretApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { environments: ["dev", "staging"] },
      }),
    );
    const rollback = await s.committer.client.secretVersions.rollback({
      params: { secretId: created.secret.id, version: 1 },
      body: {},
    });
    expect(rollback.status).toBe(200);
    const held = (rollback.body as { approval?: { id: string } }).approval;
    expect(held).toBeDefined();
    expect(rollback.headers.get("x-keyward-change-request")).toBe(held!.id);
    const still = expectOk(
      await s.tenant.admin.secretsV4.get({
        params: { secretName: "MOVABLE" },
        query: { projectId: s.projectId, environment: "staging", secretPath: "/" },
      }),
    );
    expect(still.secret.secretValue).toBe("2");
    const move = await s.committer.client.secretsMove.move({
      body: {
        projectId: s.projectId,
        sourceEnvironment: "staging",
        sourceSecretPath: "/",
        destinationEnvironment: "prod",
        destinationSecretPath: "/",
        secretIds: [created.secret.id],
      },
    });
    expect(move.body).toMatchObject({ statusCode: 400, message: expect.stringContaining("moving secrets") });
    const stillThere = await s.tenant.admin.secretsV4.get({
      params: { secretName: "MOVABLE" },
      query: { projectId: s.projectId, environment: "staging", secretPath: "/" },
    });
    expect(stillThere.status === 200 && stillThere.body.secret.secretValue).toBe("2");
  });

  it("two approvers merging at once merge once", async () => {
    const s = await setup();
    await protect(s);
    const request = await propose(s, s.committer, "RACE", "1");
    expectOk(await review(s.approverA, request.id, "approved"));
    expectOk(await review(s.approverB, request.id, "approved"));
    const results = await Promise.all([merge(s.approverA, request.id), merge(s.approverB, request.id)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const versions = await s.tenant.admin.secretsV4.get({
      params: { secretName: "RACE" },
      query: { projectId: s.projectId, environment: "dev", secretPath: "/" },
    });
    expect(versions.status === 200 && versions.body.secret.version).toBe(1);
  });
});
