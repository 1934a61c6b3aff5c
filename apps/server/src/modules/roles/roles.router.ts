import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { createRole, deleteRole, getRole, getRoleBySlug, listProjectRoles, updateRole } from "./roles.service";

const s = initServer();

export const rolesRouter = (deps: AppDeps) =>
  s.router(contract.roles, {
    create: async ({ params, body, req, res }) =>
      ok({ role: await createRole(contextOf(deps, req, res), params.projectId, body) }),
    list: async ({ params, req, res }) =>
      ok({ roles: await listProjectRoles(contextOf(deps, req, res), params.projectId) }),
    getBySlug: async ({ params, req, res }) =>
      ok({ role: await getRoleBySlug(contextOf(deps, req, res), params.projectId, params.roleSlug) }),
    get: async ({ params, req, res }) =>
      ok({ role: await getRole(contextOf(deps, req, res), params.projectId, params.roleId) }),
    update: async ({ params, body, req, res }) =>
      ok({ role: await updateRole(contextOf(deps, req, res), params.projectId, params.roleId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ role: await deleteRole(contextOf(deps, req, res), params.projectId, params.roleId) }),
  });
