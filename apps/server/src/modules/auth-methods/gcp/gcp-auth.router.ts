import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { attachGcpAuth, getGcpAuth, revokeGcpAuth, updateGcpAuthConfig } from "./gcp-auth.service";
import { loginWithGcp } from "./gcp-login.service";

const s = initServer();

export const gcpAuthRouter = (deps: AppDeps) =>
  s.router(contract.gcpAuth, {
    login: async ({ body, req, res }) => ok(await loginWithGcp(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityGcpAuth: await attachGcpAuth(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityGcpAuth: await getGcpAuth(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityGcpAuth: await updateGcpAuthConfig(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityGcpAuth: await revokeGcpAuth(contextOf(deps, req, res), params.identityId) }),
  });
