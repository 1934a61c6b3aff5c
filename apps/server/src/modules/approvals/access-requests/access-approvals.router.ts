import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import {
  countAccessApprovalPolicies,
  createAccessApprovalPolicy,
  deleteAccessApprovalPolicy,
  getAccessApprovalPolicy,
  listAccessApprovalPolicies,
  updateAccessApprovalPolicy,
} from "./access-policy.service";
import { countAccessRequests, createAccessRequest, listAccessRequests } from "./access-request.service";
import { reviewAccessRequest, revokeAccessRequest } from "./access-review.service";

const s = initServer();

export const accessApprovalPoliciesRouter = (deps: AppDeps) =>
  s.router(contract.accessApprovalPolicies, {
    create: async ({ body, req, res }) =>
      ok({ approval: await createAccessApprovalPolicy(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) =>
      ok({ approvals: await listAccessApprovalPolicies(contextOf(deps, req, res), query.projectSlug) }),
    count: async ({ query, req, res }) =>
      ok({ count: await countAccessApprovalPolicies(contextOf(deps, req, res), query.projectSlug, query.envSlug) }),
    get: async ({ params, req, res }) =>
      ok({ approval: await getAccessApprovalPolicy(contextOf(deps, req, res), params.policyId) }),
    update: async ({ params, body, req, res }) =>
      ok({ approval: await updateAccessApprovalPolicy(contextOf(deps, req, res), params.policyId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ approval: await deleteAccessApprovalPolicy(contextOf(deps, req, res), params.policyId) }),
  });

export const accessApprovalRequestsRouter = (deps: AppDeps) =>
  s.router(contract.accessApprovalRequests, {
    create: async ({ query, body, req, res }) =>
      ok({ approval: await createAccessRequest(contextOf(deps, req, res), query.projectSlug, body) }),
    list: async ({ query, req, res }) => ok({ requests: await listAccessRequests(contextOf(deps, req, res), query) }),
    count: async ({ query, req, res }) => ok(await countAccessRequests(contextOf(deps, req, res), query)),
    review: async ({ params, body, req, res }) =>
      ok({ review: await reviewAccessRequest(contextOf(deps, req, res), params.requestId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ request: await revokeAccessRequest(contextOf(deps, req, res), params.requestId) }),
  });
