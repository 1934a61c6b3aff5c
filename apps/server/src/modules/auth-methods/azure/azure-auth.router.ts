import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { azureAuth } from "./azure-auth.service";
import { loginWithAzure } from "./azure-login.service";

const s = initServer();

export const azureAuthRouter = (deps: AppDeps) =>
  s.router(contract.azureAuth, {
    login: async ({ body, req, res }) => ok(await loginWithAzure(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityAzureAuth: await azureAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityAzureAuth: await azureAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityAzureAuth: await azureAuth.update(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityAzureAuth: await azureAuth.revoke(contextOf(deps, req, res), params.identityId) }),
  });
