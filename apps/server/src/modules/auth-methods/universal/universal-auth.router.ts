import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import {
  createClientSecret,
  getClientSecret,
  listClientSecrets,
  revokeClientSecret,
} from "./universal-auth-secrets.service";
import { loginWithUniversalAuth } from "./universal-auth-login.service";
import { universalAuth, clearUniversalAuthLockouts } from "./universal-auth.service";

const s = initServer();

export const universalAuthRouter = (deps: AppDeps) =>
  s.router(contract.universalAuth, {
    login: async ({ body, req, res }) => ok(await loginWithUniversalAuth(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityUniversalAuth", universalAuth),
    createClientSecret: async ({ params, body, req, res }) =>
      ok(await createClientSecret(contextOf(deps, req, res), params.identityId, body)),
    listClientSecrets: async ({ params, req, res }) =>
      ok(await listClientSecrets(contextOf(deps, req, res), params.identityId)),
    getClientSecret: async ({ params, req, res }) =>
      ok(await getClientSecret(contextOf(deps, req, res), params.identityId, params.clientSecretId)),
    revokeClientSecret: async ({ params, req, res }) =>
      ok(await revokeClientSecret(contextOf(deps, req, res), params.identityId, params.clientSecretId)),
    clearLockouts: async ({ params, req, res }) =>
      ok(await clearUniversalAuthLockouts(contextOf(deps, req, res), params.identityId)),
  });
