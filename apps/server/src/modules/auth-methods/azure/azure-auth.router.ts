import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { azureAuth } from "./azure-auth.service";
import { loginWithAzure } from "./azure-login.service";

const s = initServer();

export const azureAuthRouter = (deps: AppDeps) =>
  s.router(contract.azureAuth, {
    login: async ({ body, req, res }) => ok(await loginWithAzure(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityAzureAuth", azureAuth),
  });
