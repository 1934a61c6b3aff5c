import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createFixture, READ_DEV_ROOT, type Fixture } from "../../access-approvals/helpers";
import type { Tenant } from "../../helpers/tenant";
import { ok, type Step } from "./runner";

type AccessApprovalOperation = Extract<
  MutatingOperation,
  `accessApprovalPolicies.${string}` | `accessApprovalRequests.${string}`
>;

/** The tenant's admin identity approves: the reviews and revocations are its own events. */
const policyOf = async (tenant: Tenant) => {
  const f = await createFixture(tenant);
  const { approval } = ok(
    await tenant.admin.accessApprovalPolicies.create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        approvers: [{ type: "identity", id: tenant.adminIdentityId }],
      },
    }),
  );
  return { f, policy: approval };
};

const pendingRequest = async (tenant: Tenant) => {
  const { f, policy } = await policyOf(tenant);
  const { approval } = ok(
    await f.requester.client.accessApprovalRequests.create({
      query: { projectSlug: f.project.slug },
      body: { permissions: READ_DEV_ROOT, isTemporary: false },
    }),
  );
  return { f, policy, request: approval };
};

const asRequester = (f: Fixture) => ({ type: "identity", metadata: { identityId: f.requester.id } });

export const ACCESS_APPROVAL_STEPS: Record<AccessApprovalOperation, Step> = {
  "accessApprovalPolicies.create": async ({ tenant, act }) => {
    const f = await createFixture(tenant);
    const { approval } = ok(
      await act(() =>
        tenant.admin.accessApprovalPolicies.create({
          body: {
            projectSlug: f.project.slug,
            environment: "dev",
            approvers: [{ type: "identity", id: f.approvers[0].id }],
          },
        }),
      ),
    );
    return { projectId: f.project.id, metadata: { policyId: approval.id, name: approval.name, environments: ["dev"] } };
  },
  "accessApprovalPolicies.update": async ({ tenant, act }) => {
    const { f, policy } = await policyOf(tenant);
    ok(
      await act(() =>
        tenant.admin.accessApprovalPolicies.update({ params: { policyId: policy.id }, body: { name: "renamed" } }),
      ),
    );
    return { projectId: f.project.id, metadata: { policyId: policy.id, name: "renamed" } };
  },
  "accessApprovalPolicies.delete": async ({ tenant, act }) => {
    const { f, policy } = await policyOf(tenant);
    ok(await act(() => tenant.admin.accessApprovalPolicies.delete({ params: { policyId: policy.id } })));
    return { projectId: f.project.id, metadata: { policyId: policy.id, revokedRequestIds: [] } };
  },
  "accessApprovalRequests.create": async ({ tenant, act }) => {
    const { f, policy } = await policyOf(tenant);
    const { approval } = ok(
      await act(() =>
        f.requester.client.accessApprovalRequests.create({
          query: { projectSlug: f.project.slug },
          body: { permissions: READ_DEV_ROOT, isTemporary: true, temporaryRange: "1h" },
        }),
      ),
    );
    return {
      projectId: f.project.id,
      actor: asRequester(f),
      metadata: {
        requestId: approval.id,
        policyId: policy.id,
        environment: "dev",
        secretPath: "/",
        temporaryRange: "1h",
      },
    };
  },
  "accessApprovalRequests.review": async ({ tenant, act }) => {
    const { f, request } = await pendingRequest(tenant);
    const { review } = ok(
      await act(() =>
        tenant.admin.accessApprovalRequests.review({ params: { requestId: request.id }, body: { status: "approved" } }),
      ),
    );
    return {
      projectId: f.project.id,
      metadata: { requestId: request.id, reviewId: review.id, status: "approved", requestStatus: "approved" },
    };
  },
  "accessApprovalRequests.revoke": async ({ tenant, act }) => {
    const { f, request } = await pendingRequest(tenant);
    ok(
      await tenant.admin.accessApprovalRequests.review({
        params: { requestId: request.id },
        body: { status: "approved" },
      }),
    );
    ok(await act(() => tenant.admin.accessApprovalRequests.revoke({ params: { requestId: request.id } })));
    return { projectId: f.project.id, metadata: { requestId: request.id } };
  },
};
