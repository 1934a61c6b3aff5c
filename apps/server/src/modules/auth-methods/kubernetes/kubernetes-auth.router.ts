import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { kubernetesAuth } from "./kubernetes-auth.service";
import { loginWithKubernetes } from "./kubernetes-login.service";

const s = initServer();

export const kubernetesAuthRouter = (deps: AppDeps) =>
  s.router(contract.kubernetesAuth, {
    login: async ({ body, req, res }) => ok(await loginWithKubernetes(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityKubernetesAuth", kubernetesAuth),
  });
