import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { oidcAuth } from "./oidc-auth.service";
import { loginWithOidc } from "./oidc-login.service";

const s = initServer();

export const oidcAuthRouter = (deps: AppDeps) =>
  s.router(contract.oidcAuth, {
    login: async ({ body, req, res }) => ok(await loginWithOidc(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityOidcAuth: await oidcAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityOidcAuth: await oidcAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityOidcAuth: await oidcAuth.update(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityOidcAuth: await oidcAuth.revoke(contextOf(deps, req, res), params.identityId) }),
  });
