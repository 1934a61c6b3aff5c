import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { moveSecrets } from "./move.service";

const s = initServer();

/** Mounted before the v4 router, so that `/api/v4/secrets/move` is not read as a secret's name. */
export const secretsMoveRouter = (deps: AppDeps) =>
  s.router(contract.secretsMove, {
    move: async ({ body, req, res }) => ok(await moveSecrets(contextOf(deps, req, res), body)),
  });
