import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { ok } from "../../http/respond";
import { renewAccessToken, revokeAccessToken } from "./access-token.service";

const s = initServer();

export const accessTokensRouter = (deps: AppDeps) =>
  s.router(contract.accessTokens, {
    revoke: async ({ body }) => ok(await revokeAccessToken(deps, body.accessToken)),
    renew: async ({ body }) => ok(await renewAccessToken(deps, body.accessToken)),
  });
