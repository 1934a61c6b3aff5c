import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { jsonOk } from "../../http/json-response";
import { ok } from "../../http/respond";
import {
  createPrivilegeV1,
  deletePrivilegeV1,
  getPrivilegeV1,
  listPrivilegesV1,
  updatePrivilegeV1,
} from "./privileges-v1.service";
import {
  createPrivilegeV2,
  deletePrivilegeV2,
  getPrivilegeBySlugV2,
  getPrivilegeV2,
  listPrivilegesV2,
  updatePrivilegeV2,
} from "./privileges-v2.service";

const s = initServer();

/** v1 (by slug) and v2 (by id) routes over one privilege service. */
export const privilegesRouter = (deps: AppDeps) =>
  s.router(contract.privileges, {
    v2: {
      create: async ({ body, req, res }) => ok({ privilege: await createPrivilegeV2(contextOf(deps, req, res), body) }),
      update: async ({ params, body, req, res }) =>
        ok({ privilege: await updatePrivilegeV2(contextOf(deps, req, res), params.id, body) }),
      get: async ({ params, req, res }) =>
        jsonOk(res, { privilege: await getPrivilegeV2(contextOf(deps, req, res), params.id) }),
      delete: async ({ params, req, res }) =>
        ok({ privilege: await deletePrivilegeV2(contextOf(deps, req, res), params.id) }),
      getBySlug: async ({ params, query, req, res }) =>
        ok({ privilege: await getPrivilegeBySlugV2(contextOf(deps, req, res), params.privilegeSlug, query) }),
      list: async ({ query, req, res }) => ok({ privileges: await listPrivilegesV2(contextOf(deps, req, res), query) }),
    },
    v1: {
      createPermanent: async ({ body, req, res }) =>
        ok({ privilege: await createPrivilegeV1(contextOf(deps, req, res), body, { isTemporary: false }) }),
      createTemporary: async ({ body, req, res }) =>
        ok({
          privilege: await createPrivilegeV1(contextOf(deps, req, res), body, {
            isTemporary: true,
            temporaryMode: body.temporaryMode,
            temporaryRange: body.temporaryRange,
            temporaryAccessStartTime: body.temporaryAccessStartTime,
          }),
        }),
      update: async ({ body, req, res }) => ok({ privilege: await updatePrivilegeV1(contextOf(deps, req, res), body) }),
      delete: async ({ body, req, res }) => ok({ privilege: await deletePrivilegeV1(contextOf(deps, req, res), body) }),
      get: async ({ params, query, req, res }) =>
        ok({ privilege: await getPrivilegeV1(contextOf(deps, req, res), params.privilegeSlug, query) }),
      list: async ({ query, req, res }) => ok({ privileges: await listPrivilegesV1(contextOf(deps, req, res), query) }),
    },
  });
