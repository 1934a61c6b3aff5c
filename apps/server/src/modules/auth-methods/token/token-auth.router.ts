import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { methodConfigHandlers } from "../shared/method-routes";
import {
  createTokenAuthToken,
  listTokenAuthTokens,
  revokeTokenAuthTokenById,
  updateTokenAuthToken,
  tokenAuth,
} from "./token-auth.service";

const s = initServer();

export const tokenAuthRouter = (deps: AppDeps) =>
  s.router(contract.tokenAuth, {
    ...methodConfigHandlers(deps, "identityTokenAuth", tokenAuth),
    createToken: async ({ params, body, req, res }) =>
      ok(await createTokenAuthToken(contextOf(deps, req, res), params.identityId, body)),
    listTokens: async ({ params, query, req, res }) =>
      ok(await listTokenAuthTokens(contextOf(deps, req, res), params.identityId, query)),
    updateToken: async ({ params, body, req, res }) =>
      ok(await updateTokenAuthToken(contextOf(deps, req, res), params.tokenId, body)),
    revokeTokenById: async ({ params, req, res }) =>
      ok(await revokeTokenAuthTokenById(contextOf(deps, req, res), params.tokenId)),
  });
