import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import {
  attachKubernetesAuth,
  getKubernetesAuth,
  revokeKubernetesAuth,
  updateKubernetesAuthConfig,
} from "./kubernetes-auth.service";
import { loginWithKubernetes } from "./kubernetes-login.service";

const s = initServer();

export const kubernetesAuthRouter = (deps: AppDeps) =>
  s.router(contract.kubernetesAuth, {
    login: async ({ body, req, res }) => ok(await loginWithKubernetes(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityKubernetesAuth: await attachKubernetesAuth(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityKubernetesAuth: await getKubernetesAuth(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({
        identityKubernetesAuth: await updateKubernetesAuthConfig(contextOf(deps, req, res), params.identityId, body),
      }),
    revoke: async ({ params, req, res }) =>
      ok({ identityKubernetesAuth: await revokeKubernetesAuth(contextOf(deps, req, res), params.identityId) }),
  });
