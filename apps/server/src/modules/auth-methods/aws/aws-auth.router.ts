import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { awsAuth } from "./aws-auth.service";
import { loginWithAws } from "./aws-login.service";

const s = initServer();

export const awsAuthRouter = (deps: AppDeps) =>
  s.router(contract.awsAuth, {
    login: async ({ body, req, res }) => ok(await loginWithAws(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityAwsAuth: await awsAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityAwsAuth: await awsAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityAwsAuth: await awsAuth.update(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityAwsAuth: await awsAuth.revoke(contextOf(deps, req, res), params.identityId) }),
  });
