import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf, publicContextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { ldapAuth, clearLdapLockouts } from "./ldap-auth.service";
import { loginWithLdap } from "./ldap-login.service";

const s = initServer();

export const ldapAuthRouter = (deps: AppDeps) =>
  s.router(contract.ldapAuth, {
    login: async ({ body, req, res }) => ok(await loginWithLdap(publicContextOf(deps, req, res), body)),
    attach: async ({ params, body, req, res }) =>
      ok({ identityLdapAuth: await ldapAuth.attach(contextOf(deps, req, res), params.identityId, body) }),
    get: async ({ params, req, res }) =>
      ok({ identityLdapAuth: await ldapAuth.get(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identityLdapAuth: await ldapAuth.update(contextOf(deps, req, res), params.identityId, body) }),
    revoke: async ({ params, req, res }) =>
      ok({ identityLdapAuth: await ldapAuth.revoke(contextOf(deps, req, res), params.identityId) }),
    clearLockouts: async ({ params, req, res }) =>
      ok(await clearLdapLockouts(contextOf(deps, req, res), params.identityId)),
  });
