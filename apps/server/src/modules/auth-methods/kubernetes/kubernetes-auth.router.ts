import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { kubernetesAuth } from "./kubernetes-auth.service";
import { loginWithKubernetes } from "./kubernetes-login.service";

const s = initServer();

export const kubernetesAuthRouter = (deps: AppDeps) =>
  s.router(contract.kubernetesAuth, {
    login: async ({ body, req, res }) => ok(await loginWithKubernetes(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityKubernetesAuth: await kubernetesAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityKubernetesAuth: await kubernetesAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({
        identityKubernetesAuth: await kubernetesAuth.update(contextOf(deps, req, res), params.identityId, body),
      }),
    revoke: async ({ params, req, res }) =>
      ok({ identityKubernetesAuth: await kubernetesAuth.revoke(contextOf(deps, req, res), params.identityId) }),
  });
