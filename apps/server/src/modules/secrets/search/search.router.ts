import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { searchSecrets } from "./search.service";

const s = initServer();

export const secretSearchRouter = (deps: AppDeps) =>
  s.router(contract.secretSearch, {
    search: async ({ params, query, req, res }) =>
      ok(await searchSecrets(contextOf(deps, req, res), params.projectId, query)),
  });
