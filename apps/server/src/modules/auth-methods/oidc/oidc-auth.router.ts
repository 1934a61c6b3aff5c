import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { oidcAuth } from "./oidc-auth.service";
import { loginWithOidc } from "./oidc-login.service";

const s = initServer();

export const oidcAuthRouter = (deps: AppDeps) =>
  s.router(contract.oidcAuth, {
    login: async ({ body, req, res }) => ok(await loginWithOidc(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityOidcAuth", oidcAuth),
  });
