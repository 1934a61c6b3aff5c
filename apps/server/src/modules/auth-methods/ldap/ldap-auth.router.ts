import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import { ldapAuth, clearLdapLockouts } from "./ldap-auth.service";
import { loginWithLdap } from "./ldap-login.service";

const s = initServer();

export const ldapAuthRouter = (deps: AppDeps) =>
  s.router(contract.ldapAuth, {
    login: async ({ body, req, res }) => ok(await loginWithLdap(publicContextOf(deps, req, res), body)),
    ...methodConfigHandlers(deps, "identityLdapAuth", ldapAuth),
    clearLockouts: async ({ params, req, res }) =>
      ok(await clearLdapLockouts(contextOf(deps, req, res), params.identityId)),
  });
