import { expect } from "vitest";
import type { ApprovalPrincipalInput } from "@keyward/contract";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";

/** What the change-request suites share: a project of three members, its policy, proposals and reviews. */
export type Setup = {
  tenant: Tenant;
  projectId: string;
  committer: TestIdentity;
  approverA: TestIdentity;
  approverB: TestIdentity;
};

export const member = (tenant: Tenant, projectId: string) =>
  createIdentity(tenant, { projectId, projectRole: "member" });
export const asIdentity = (i: TestIdentity): ApprovalPrincipalInput => ({ type: "identity", id: i.id });

/** A project with three members: one who writes, two who approve. */
export const setup = async (): Promise<Setup> => {
  const tenant = await createTenant();
  const { id: projectId } = await createProject(tenant);
  const [committer, approverA, approverB] = await Promise.all([
    member(tenant, projectId),
    member(tenant, projectId),
    member(tenant, projectId),
  ]);
  return { tenant, projectId, committer, approverA, approverB };
};

export const protect = async (
  s: Setup,
  extra: Partial<{
    approvals: number;
    approvers: ApprovalPrincipalInput[];
    bypassers: ApprovalPrincipalInput[];
    enforcementLevel: "hard" | "soft";
    allowedSelfApprovals: boolean;
    bypassForMachineIdentities: boolean;
    secretPath: string;
  }> = {},
) =>
  expectOk(
    await s.tenant.admin.secretApprovalPolicies.create({
      body: {
        projectId: s.projectId,
        environment: "dev",
        secretPath: "/",
        approvers: [asIdentity(s.approverA), asIdentity(s.approverB)],
        approvals: 2,
        ...extra,
      },
    }),
  ).approval;

/** A write by `by` into the protected folder: the change request it opened. */
export const propose = async (s: Pick<Setup, "projectId">, by: TestIdentity, key: string, value: string) => {
  const res = await by.client.secretsV4.create({
    params: { secretName: key },
    body: { projectId: s.projectId, environment: "dev", secretPath: "/", secretValue: value },
  });
  expect(res.status).toBe(200);
  const body = res.body as { approval?: { id: string; status: string; hasMerged: boolean } };
  expect(body.approval, JSON.stringify(res.body)).toBeDefined();
  expect(res.headers.get("x-keyward-change-request")).toBe(body.approval!.id);
  return body.approval!;
};

export const valueOf = async (s: Setup, key: string) => {
  const res = await s.tenant.admin.secretsV4.get({
    params: { secretName: key },
    query: { projectId: s.projectId, environment: "dev", secretPath: "/" },
  });
  return res.status === 200 ? res.body.secret.secretValue : res.status;
};

export const review = (who: TestIdentity, requestId: string, status: "approved" | "rejected", comment?: string) =>
  who.client.secretApprovalRequests.review({ params: { requestId }, body: { status, comment } });
export const merge = (who: TestIdentity, requestId: string, bypassReason?: string) =>
  who.client.secretApprovalRequests.merge({ params: { requestId }, body: { bypassReason } });
