import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { gcpAuth } from "./gcp-auth.service";
import { loginWithGcp } from "./gcp-login.service";

const s = initServer();

export const gcpAuthRouter = (deps: AppDeps) =>
  s.router(contract.gcpAuth, {
    login: async ({ body, req, res }) => ok(await loginWithGcp(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityGcpAuth", gcpAuth),
  });
