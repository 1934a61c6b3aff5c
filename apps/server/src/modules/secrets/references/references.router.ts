import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { getReferenceDependencyTree, getSecretReferenceTree } from "./tree";

const s = initServer();

export const secretReferencesRouter = (deps: AppDeps) =>
  s.router(contract.secretReferences, {
    referenceTree: async ({ params, query, req, res }) =>
      ok(await getSecretReferenceTree(contextOf(deps, req, res), params.secretName, query)),
    dependencyTree: async ({ params, query, req, res }) =>
      ok(await getReferenceDependencyTree(contextOf(deps, req, res), params.secretName, query)),
  });
