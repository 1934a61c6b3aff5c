import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import { asIdentity, protect, setup } from "./helpers";

describe("change approval policies", () => {
  it("creates, lists, shows, finds for a folder, updates and retires a policy", async () => {
    const s = await setup();
    const policy = await protect(s, { secretPath: "/apps/**", approvals: 1 });
    expect(policy).toMatchObject({
      secretPath: "/apps/**",
      approvals: 1,
      enforcementLevel: "hard",
      allowedSelfApprovals: false,
      environment: { slug: "dev" },
    });
    expect(policy.approvers.map((a) => a.id).sort()).toEqual([s.approverA.id, s.approverB.id].sort());
    const listed = expectOk(await s.tenant.admin.secretApprovalPolicies.list({ query: { projectId: s.projectId } }));
    expect(listed.approvals.map((p) => p.id)).toEqual([policy.id]);
    expect(
      expectOk(await s.tenant.admin.secretApprovalPolicies.get({ params: { policyId: policy.id } })).approval.name,
    ).toBe(policy.name);
    const board = (secretPath: string) =>
      s.tenant.admin.secretApprovalPolicies.board({
        query: { projectId: s.projectId, environment: "dev", secretPath },
      });
    expect(expectOk(await board("/apps/api/")).policy?.id).toBe(policy.id);
    expect(expectOk(await board("/other")).policy).toBeNull();
    const updated = expectOk(
      await s.tenant.admin.secretApprovalPolicies.update({
        params: { policyId: policy.id },
        body: { approvers: [asIdentity(s.approverA)], approvals: 1, enforcementLevel: "soft" } as never,
      }),
    ).approval;
    expect(updated.approvers.map((a) => a.id)).toEqual([s.approverA.id]);
    expect(updated.enforcementLevel).toBe("soft");
    const retired = expectOk(await s.tenant.admin.secretApprovalPolicies.delete({ params: { policyId: policy.id } }));
    expect(retired.approval.deletedAt).not.toBeNull();
    expect(expectOk(await board("/apps/api")).policy).toBeNull();
  });

  it("refuses unknown environments, unreachable approvals, outsiders, a second policy on the same folder", async () => {
    const s = await setup();
    const create = (body: Record<string, unknown>) =>
      s.tenant.admin.secretApprovalPolicies.create({
        body: {
          projectId: s.projectId,
          environment: "dev",
          secretPath: "/",
          approvers: [asIdentity(s.approverA)],
          ...body,
        },
      });
    const nope = await create({ environment: "nope" });
    expect(nope.status).toBe(404);
    expect(nope.body).toMatchObject({ message: "One or more environments not found: nope" });
    expect((await create({ approvals: 2 })).body).toMatchObject({
      statusCode: 400,
      message: "Approvals cannot be greater than approvers",
    });
    const outsider = await createIdentity(s.tenant);
    const out = await create({ approvers: [asIdentity(outsider)] });
    expect(out.status).toBe(400);
    expect(JSON.stringify(out.body)).toContain("is not a member of the project");
    expectOk(await create({}));
    expect((await create({})).body).toMatchObject({
      statusCode: 400,
      message: "A policy for secret path '/' already exists in environment 'dev'",
    });
    expect((await create({ environment: undefined })).status).toBe(422);
  });

  it("403 for members without the policy rights, 404 for another organization's policy", async () => {
    const s = await setup();
    const policy = await protect(s);
    const denied = await s.committer.client.secretApprovalPolicies.create({
      body: {
        projectId: s.projectId,
        environment: "staging",
        secretPath: "/",
        approvers: [asIdentity(s.approverA)],
      },
    });
    expect(denied.status).toBe(403);
    expect((await s.committer.client.secretApprovalPolicies.delete({ params: { policyId: policy.id } })).status).toBe(
      403,
    );
    const other = await createTenant();
    for (const res of [
      await other.admin.secretApprovalPolicies.get({ params: { policyId: policy.id } }),
      await other.admin.secretApprovalPolicies.delete({ params: { policyId: policy.id } }),
    ])
      expect(res.status).toBe(404);
  });
});
