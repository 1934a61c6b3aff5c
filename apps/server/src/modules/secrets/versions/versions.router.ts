import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { listSecretVersions, rollbackSecret } from "./version.service";
import { written } from "../secrets.router";

const s = initServer();

export const secretVersionsRouter = (deps: AppDeps) =>
  s.router(contract.secretVersions, {
    list: async ({ params, query, req, res }) =>
      ok({ secretVersions: await listSecretVersions(contextOf(deps, req, res), params.secretId, query) }),
    rollback: async ({ params, req, res }) =>
      written(res, await rollbackSecret(contextOf(deps, req, res), params.secretId, params.version)),
  });
