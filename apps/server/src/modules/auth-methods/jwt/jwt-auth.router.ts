import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { jwtAuth } from "./jwt-auth.service";
import { loginWithJwt } from "./jwt-login.service";

const s = initServer();

export const jwtAuthRouter = (deps: AppDeps) =>
  s.router(contract.jwtAuth, {
    login: async ({ body, req, res }) => ok(await loginWithJwt(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityJwtAuth", jwtAuth),
  });
