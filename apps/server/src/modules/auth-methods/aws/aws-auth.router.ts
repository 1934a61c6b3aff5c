import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { awsAuth } from "./aws-auth.service";
import { loginWithAws } from "./aws-login.service";

const s = initServer();

export const awsAuthRouter = (deps: AppDeps) =>
  s.router(contract.awsAuth, {
    login: async ({ body, req, res }) => ok(await loginWithAws(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityAwsAuth", awsAuth),
  });
