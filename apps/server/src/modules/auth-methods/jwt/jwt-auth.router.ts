import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { jwtAuth } from "./jwt-auth.service";
import { loginWithJwt } from "./jwt-login.service";

const s = initServer();

export const jwtAuthRouter = (deps: AppDeps) =>
  s.router(contract.jwtAuth, {
    login: async ({ body, req, res }) => ok(await loginWithJwt(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityJwtAuth: await jwtAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityJwtAuth: await jwtAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityJwtAuth: await jwtAuth.update(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityJwtAuth: await jwtAuth.revoke(contextOf(deps, req, res), params.identityId) }),
  });
