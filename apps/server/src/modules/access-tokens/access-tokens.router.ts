import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf, publicContextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { renewAccessToken, revokeAccessToken } from "./access-token.service";
import { describeOwnToken } from "./token-self.service";

const s = initServer();

export const accessTokensRouter = (deps: AppDeps) =>
  s.router(contract.accessTokens, {
    self: async ({ req, res }) => ok(await describeOwnToken(contextOf(deps, req, res))),
    revoke: async ({ body, req, res }) =>
      ok(await revokeAccessToken(publicContextOf(deps, req, res), body.accessToken)),
    renew: async ({ body, req, res }) => ok(await renewAccessToken(publicContextOf(deps, req, res), body.accessToken)),
  });
