import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf, publicContextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { bootstrapInstance, createOrganization, isInstanceSetUp } from "./bootstrap.service";

const s = initServer();

export const systemRouter = (deps: AppDeps) =>
  s.router(contract.system, {
    // From the last known state, never waiting on a database that may not answer; a check runs behind it.
    status: async () => {
      deps.dbHealth.refresh();
      const ready = deps.dbHealth.isUp() && !deps.lifecycle.isDraining();
      return ok({ status: "ok" as const, date: new Date().toISOString(), ready });
    },
    config: async () => ok({ config: { initialized: await isInstanceSetUp(deps.db) } }),
    bootstrap: async ({ body, req, res }) => ok(await bootstrapInstance(publicContextOf(deps, req, res), body)),
    createOrganization: async ({ body, req, res }) => ok(await createOrganization(contextOf(deps, req, res), body)),
  });
