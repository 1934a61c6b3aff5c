import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import {
  boardPolicy,
  createApprovalPolicy,
  deleteApprovalPolicy,
  getApprovalPolicy,
  listApprovalPolicies,
  updateApprovalPolicy,
} from "./secret-policy.service";
import { countChangeRequests, getChangeRequest, listChangeRequests } from "./change-request-read.service";
import { mergeChangeRequest, reviewChangeRequest, setChangeRequestStatus } from "./change-request-review.service";

const s = initServer();

export const secretApprovalPoliciesRouter = (deps: AppDeps) =>
  s.router(contract.secretApprovalPolicies, {
    create: async ({ body, req, res }) => ok({ approval: await createApprovalPolicy(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) =>
      ok({ approvals: await listApprovalPolicies(contextOf(deps, req, res), query) }),
    board: async ({ query, req, res }) => ok({ policy: await boardPolicy(contextOf(deps, req, res), query) }),
    get: async ({ params, req, res }) =>
      ok({ approval: await getApprovalPolicy(contextOf(deps, req, res), params.policyId) }),
    update: async ({ params, body, req, res }) =>
      ok({ approval: await updateApprovalPolicy(contextOf(deps, req, res), params.policyId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ approval: await deleteApprovalPolicy(contextOf(deps, req, res), params.policyId) }),
  });

export const secretApprovalRequestsRouter = (deps: AppDeps) =>
  s.router(contract.secretApprovalRequests, {
    list: async ({ query, req, res }) => ok(await listChangeRequests(contextOf(deps, req, res), query)),
    count: async ({ query, req, res }) =>
      ok({ approvals: await countChangeRequests(contextOf(deps, req, res), query) }),
    get: async ({ params, req, res }) =>
      ok({ approval: await getChangeRequest(contextOf(deps, req, res), params.requestId) }),
    review: async ({ params, body, req, res }) =>
      ok({ review: await reviewChangeRequest(contextOf(deps, req, res), params.requestId, body) }),
    status: async ({ params, body, req, res }) =>
      ok({ approval: await setChangeRequestStatus(contextOf(deps, req, res), params.requestId, body.status) }),
    merge: async ({ params, body, req, res }) =>
      ok({ approval: await mergeChangeRequest(contextOf(deps, req, res), params.requestId, body) }),
  });
