import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { jsonOk, jsonWithEtag } from "../../http/json-response";
import { createSecretsBatch, deleteSecretsBatch, updateSecretsBatch } from "./secret-batch.service";
import { getSecretById, getSecretByName } from "./secret-get.service";
import { listSecrets } from "./secret-read.service";
import { createSecret, deleteSecret, updateSecret } from "./secret-write.service";

const s = initServer();

export const secretsV3Router = (deps: AppDeps) =>
  s.router(contract.secretsV3, {
    list: async ({ query, req, res }) => jsonOk(res, await listSecrets(contextOf(deps, req, res), query)),
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
      ok({ secret: await createSecret(contextOf(deps, req, res), params.secretName, body) }),
    update: async ({ params, body, req, res }) =>
      ok({ secret: await updateSecret(contextOf(deps, req, res), params.secretName, body) }),
    delete: async ({ params, body, req, res }) =>
      ok({ secret: await deleteSecret(contextOf(deps, req, res), params.secretName, body) }),
    batchCreate: async ({ body, req, res }) =>
      ok({ secrets: await createSecretsBatch(contextOf(deps, req, res), body) }),
    batchUpdate: async ({ body, req, res }) =>
      ok({ secrets: await updateSecretsBatch(contextOf(deps, req, res), body) }),
    batchDelete: async ({ body, req, res }) =>
      ok({ secrets: await deleteSecretsBatch(contextOf(deps, req, res), body) }),
  });

export const secretsV4Router = (deps: AppDeps) =>
  s.router(contract.secretsV4, {
    list: async ({ query, req, res }) => jsonWithEtag(req, res, await listSecrets(contextOf(deps, req, res), query)),
    batchCreate: async ({ body, req, res }) =>
      ok({ secrets: await createSecretsBatch(contextOf(deps, req, res), body) }),
    batchUpdate: async ({ body, req, res }) =>
      ok({ secrets: await updateSecretsBatch(contextOf(deps, req, res), body) }),
    batchDelete: async ({ body, req, res }) =>
      ok({ secrets: await deleteSecretsBatch(contextOf(deps, req, res), body) }),
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
      ok({ secret: await createSecret(contextOf(deps, req, res), params.secretName, body) }),
    update: async ({ params, body, req, res }) =>
      ok({ secret: await updateSecret(contextOf(deps, req, res), params.secretName, body) }),
    delete: async ({ params, body, req, res }) =>
      ok({ secret: await deleteSecret(contextOf(deps, req, res), params.secretName, body) }),
  });
