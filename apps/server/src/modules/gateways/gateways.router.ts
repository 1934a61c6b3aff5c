import type { RequestHandler, Response } from "express";
import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { clientIpOf, contextOf, publicContextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { scopeOfResponse } from "../../http/authenticate";
import {
  authenticateGateway,
  loginGateway,
  mintEnrollmentToken,
  recordGatewayHeartbeat,
  revokeGatewayAccess,
  type GatewayCaller,
} from "./gateway-auth.service";
import { createGateway, deleteGateway, getGateway, listGateways, updateGateway } from "./gateway.service";

const s = initServer();

/** Gateway-token routes authenticate before validation, so 401 wins over 422 as on identity routes. */
const gatewayAuth =
  (deps: AppDeps): RequestHandler =>
  (req, res, next) => {
    authenticateGateway(deps, req.headers.authorization, clientIpOf(req)).then((caller) => {
      res.locals.gatewayCaller = caller;
      next();
    }, next);
  };

const gatewayCallerOf = (res: Response) => res.locals.gatewayCaller as GatewayCaller;

const heartbeatRoute = (deps: AppDeps) => ({
  middleware: [gatewayAuth(deps)],
  handler: async ({ body, res }: { body: { heartbeatTTL?: number }; res: Response }) =>
    ok(await recordGatewayHeartbeat({ deps, scope: scopeOfResponse(res) }, gatewayCallerOf(res), body)),
});

export const gatewaysRouter = (deps: AppDeps) =>
  s.router(contract.gateways, {
    create: async ({ body, req, res }) => ok(await createGateway(contextOf(deps, req, res), body)),
    list: async ({ req, res }) => ok(await listGateways(contextOf(deps, req, res))),
    get: async ({ params, req, res }) => ok(await getGateway(contextOf(deps, req, res), params.gatewayId)),
    update: async ({ params, body, req, res }) =>
      ok(await updateGateway(contextOf(deps, req, res), params.gatewayId, body)),
    delete: async ({ params, req, res }) => ok(await deleteGateway(contextOf(deps, req, res), params.gatewayId)),
    mintEnrollmentToken: async ({ params, req, res }) =>
      ok(await mintEnrollmentToken(contextOf(deps, req, res), params.gatewayId)),
    revoke: async ({ params, req, res }) => ok(await revokeGatewayAccess(contextOf(deps, req, res), params.gatewayId)),
    login: async ({ body, req, res }) => ok(await loginGateway(publicContextOf(deps, req, res), body)),
    tokenAuthEnroll: async ({ body, req, res }) =>
      ok(await loginGateway(publicContextOf(deps, req, res), { method: "token", token: body.token })),
    heartbeat: heartbeatRoute(deps),
    heartbeatV2: heartbeatRoute(deps),
  });
