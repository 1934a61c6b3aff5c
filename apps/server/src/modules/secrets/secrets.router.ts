import { initServer } from "@ts-rest/express";
import type { Response } from "express";
import { contract, type ChangeRequest, type SecretListPage } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { jsonOk, jsonWithEtag } from "../../http/json-response";
import { createSecretsBatch, deleteSecretsBatch, updateSecretsBatch } from "./secret-batch.service";
import { getSecretById, getSecretByName } from "./secret-get.service";
import { listSecrets } from "./secret-read.service";
import { createSecret, deleteSecret, updateSecret } from "./secret-write.service";

const s = initServer();

/**
 * A write's answer: what was written, or, when a change policy protects the folder, the change
 * request opened instead (as the reference answers), named in a header too so no client mistakes it
 * for a write.
 */
export const written = <T extends object>(res: Response, body: T | { approval: ChangeRequest }) => {
  if ("approval" in body) res.setHeader("X-Keyward-Change-Request", body.approval.id);
  return ok(body);
};

export const secretsV3Router = (deps: AppDeps) =>
  s.router(contract.secretsV3, {
    // The operator polls this list: the same validator and 304 as the v4 list.
    list: async ({ query, req, res }) =>
      jsonWithEtag<SecretListPage>(req, res, await listSecrets(contextOf(deps, req, res), query)),
    getById: async ({ params, req, res }) =>
      ok({ secret: await getSecretById(contextOf(deps, req, res), params.secretId) }),
    get: async ({ params, query, req, res }) =>
      jsonOk(res, {
        secret: await getSecretByName(
          contextOf(deps, req, res),
          params.secretName,
          query,
          "You must provide workspaceSlug or workspaceId",
        ),
      }),
    create: async ({ params, body, req, res }) =>
      written(res, await createSecret(contextOf(deps, req, res), params.secretName, body)),
    update: async ({ params, body, req, res }) =>
      written(res, await updateSecret(contextOf(deps, req, res), params.secretName, body)),
    delete: async ({ params, body, req, res }) =>
      written(res, await deleteSecret(contextOf(deps, req, res), params.secretName, body)),
    batchCreate: async ({ body, req, res }) => written(res, await createSecretsBatch(contextOf(deps, req, res), body)),
    batchUpdate: async ({ body, req, res }) => written(res, await updateSecretsBatch(contextOf(deps, req, res), body)),
    batchDelete: async ({ body, req, res }) => written(res, await deleteSecretsBatch(contextOf(deps, req, res), body)),
  });

export const secretsV4Router = (deps: AppDeps) =>
  s.router(contract.secretsV4, {
    list: async ({ query, req, res }) =>
      jsonWithEtag<SecretListPage>(req, res, await listSecrets(contextOf(deps, req, res), query)),
    batchCreate: async ({ body, req, res }) => written(res, await createSecretsBatch(contextOf(deps, req, res), body)),
    batchUpdate: async ({ body, req, res }) => written(res, await updateSecretsBatch(contextOf(deps, req, res), body)),
    batchDelete: async ({ body, req, res }) => written(res, await deleteSecretsBatch(contextOf(deps, req, res), body)),
    getById: async ({ params, req, res }) =>
      ok({ secret: await getSecretById(contextOf(deps, req, res), params.secretId) }),
    get: async ({ params, query, req, res }) =>
      jsonWithEtag(req, res, {
        secret: await getSecretByName(
          contextOf(deps, req, res),
          params.secretName,
          query,
          "You must provide  workspaceId",
        ),
      }),
    create: async ({ params, body, req, res }) =>
      written(res, await createSecret(contextOf(deps, req, res), params.secretName, body)),
    update: async ({ params, body, req, res }) =>
      written(res, await updateSecret(contextOf(deps, req, res), params.secretName, body)),
    delete: async ({ params, body, req, res }) =>
      written(res, await deleteSecret(contextOf(deps, req, res), params.secretName, body)),
  });
