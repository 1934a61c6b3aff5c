import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { createSecretImport, deleteSecretImport, listSecretImports, updateSecretImport } from "./secret-import.service";

const s = initServer();

export const secretImportsRouter = (deps: AppDeps) =>
  s.router(contract.secretImports, {
    create: async ({ body, req, res }) => ok(await createSecretImport(contextOf(deps, req, res), body)),
    list: async ({ query, req, res }) => ok(await listSecretImports(contextOf(deps, req, res), query)),
    update: async ({ params, body, req, res }) =>
      ok(await updateSecretImport(contextOf(deps, req, res), params.secretImportId, body)),
    delete: async ({ params, body, req, res }) =>
      ok(await deleteSecretImport(contextOf(deps, req, res), params.secretImportId, body)),
  });
