import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { ok, type Step } from "./runner";

type ApprovalOperation = Extract<MutatingOperation, `secretApproval${string}`>;

/** A project whose dev root is protected by a policy the tenant's admin identity approves (self-approval allowed). */
const protectedProject = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const { approval: policy } = ok(
    await tenant.admin.secretApprovalPolicies.create({
      body: {
        projectId: project.id,
        environment: "dev",
        secretPath: "/",
        approvers: [{ type: "identity", id: tenant.adminIdentityId }],
        allowedSelfApprovals: true,
      } as never,
    }),
  );
  return { project, policy };
};

/** A change request opened by the admin's write into the protected folder. */
const openRequest = async (tenant: Tenant) => {
  const { project, policy } = await protectedProject(tenant);
  const body = ok(
    await tenant.admin.secretsV4.create({
      params: { secretName: uniqueName("KEY").toUpperCase().replace(/-/g, "_") },
      body: { projectId: project.id, environment: "dev", secretPath: "/", secretValue: "proposed" },
    }),
  );
  if (!("approval" in body)) throw new Error("the write was not turned into a change request");
  return { project, policy, request: body.approval };
};

export const APPROVAL_STEPS: Record<ApprovalOperation, Step> = {
  "secretApprovalPolicies.create": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const { approval } = ok(
      await act(() =>
        tenant.admin.secretApprovalPolicies.create({
          body: {
            projectId: project.id,
            environment: "dev",
            secretPath: "/apps/**",
            approvers: [{ type: "identity", id: tenant.adminIdentityId }],
          } as never,
        }),
      ),
    );
    return { projectId: project.id, metadata: { policyId: approval.id, secretPath: "/apps/**" } };
  },
  "secretApprovalPolicies.update": async ({ tenant, act }) => {
    const { project, policy } = await protectedProject(tenant);
    ok(
      await act(() =>
        tenant.admin.secretApprovalPolicies.update({
          params: { policyId: policy.id },
          body: { name: "renamed" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { policyId: policy.id, name: "renamed" } };
  },
  "secretApprovalPolicies.delete": async ({ tenant, act }) => {
    const { project, policy } = await protectedProject(tenant);
    ok(await act(() => tenant.admin.secretApprovalPolicies.delete({ params: { policyId: policy.id } })));
    return { projectId: project.id, metadata: { policyId: policy.id } };
  },
  "secretApprovalRequests.review": async ({ tenant, act }) => {
    const { project, request } = await openRequest(tenant);
    ok(
      await act(() =>
        tenant.admin.secretApprovalRequests.review({
          params: { requestId: request.id },
          body: { status: "approved", comment: "fine" },
        }),
      ),
    );
    return {
      projectId: project.id,
      metadata: { secretApprovalRequestId: request.id, status: "approved", reviewedBy: tenant.adminIdentityId },
    };
  },
  "secretApprovalRequests.status": async ({ tenant, act }) => {
    const { project, request } = await openRequest(tenant);
    ok(
      await act(() =>
        tenant.admin.secretApprovalRequests.status({ params: { requestId: request.id }, body: { status: "close" } }),
      ),
    );
    return {
      projectId: project.id,
      metadata: { secretApprovalRequestId: request.id, closedBy: tenant.adminIdentityId },
    };
  },
  "secretApprovalRequests.merge": async ({ tenant, act }) => {
    const { project, request } = await openRequest(tenant);
    ok(
      await tenant.admin.secretApprovalRequests.review({
        params: { requestId: request.id },
        body: { status: "approved" },
      }),
    );
    ok(await act(() => tenant.admin.secretApprovalRequests.merge({ params: { requestId: request.id }, body: {} })));
    return {
      projectId: project.id,
      metadata: { secretApprovalRequestId: request.id, mergedBy: tenant.adminIdentityId },
    };
  },
};
