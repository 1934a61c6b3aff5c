import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { gcpAuth } from "./gcp-auth.service";
import { loginWithGcp } from "./gcp-login.service";

const s = initServer();

export const gcpAuthRouter = (deps: AppDeps) =>
  s.router(contract.gcpAuth, {
    login: async ({ body, req, res }) => ok(await loginWithGcp(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityGcpAuth: await gcpAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityGcpAuth: await gcpAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityGcpAuth: await gcpAuth.update(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityGcpAuth: await gcpAuth.revoke(contextOf(deps, req, res), params.identityId) }),
  });
