import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { jsonOk } from "../../http/json-response";
import { ok } from "../../http/respond";
import {
  createOrgIdentity,
  deleteOrgIdentity,
  getOrgIdentity,
  listOrgIdentities,
  updateOrgIdentity,
} from "./identity.service";
import {
  createProjectIdentity,
  deleteProjectIdentity,
  getProjectIdentity,
  listProjectIdentities,
  updateProjectIdentity,
} from "./project-identity.service";

const s = initServer();

export const identitiesRouter = (deps: AppDeps) =>
  s.router(contract.identities, {
    create: async ({ body, req, res }) => ok({ identity: await createOrgIdentity(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) => ok(await listOrgIdentities(contextOf(deps, req, res), query)),
    get: async ({ params, req, res }) =>
      jsonOk(res, { identity: await getOrgIdentity(contextOf(deps, req, res), params.identityId) }),
    update: async ({ params, body, req, res }) =>
      ok({ identity: await updateOrgIdentity(contextOf(deps, req, res), params.identityId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ identity: await deleteOrgIdentity(contextOf(deps, req, res), params.identityId) }),
  });

export const projectIdentitiesRouter = (deps: AppDeps) =>
  s.router(contract.projectIdentities, {
    create: async ({ params, body, req, res }) =>
      ok({ identity: await createProjectIdentity(contextOf(deps, req, res), params.projectId, body) }),
    list: async ({ params, query, req, res }) =>
      ok(await listProjectIdentities(contextOf(deps, req, res), params.projectId, query)),
    get: async ({ params, req, res }) =>
      jsonOk(res, {
        identity: await getProjectIdentity(contextOf(deps, req, res), params.projectId, params.identityId),
      }),
    update: async ({ params, body, req, res }) =>
      ok({
        identity: await updateProjectIdentity(contextOf(deps, req, res), params.projectId, params.identityId, body),
      }),
    delete: async ({ params, req, res }) =>
      ok({ identity: await deleteProjectIdentity(contextOf(deps, req, res), params.projectId, params.identityId) }),
  });
