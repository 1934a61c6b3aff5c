import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { createScimToken, deleteScimToken, listScimTokens } from "./scim-tokens.service";

const s = initServer();

export const scimTokensRouter = (deps: AppDeps) =>
  s.router(contract.scim, {
    createScimToken: async ({ body, req, res }) => ok(await createScimToken(contextOf(deps, req, res), body)),
    listScimTokens: async ({ query, req, res }) =>
      ok({ scimTokens: await listScimTokens(contextOf(deps, req, res), query.organizationId) }),
    deleteScimToken: async ({ params, req, res }) =>
      ok({ scimToken: await deleteScimToken(contextOf(deps, req, res), params.scimTokenId) }),
  });
