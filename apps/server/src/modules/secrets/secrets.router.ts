import { createHash } from "node:crypto";
import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { createSecretsBatch, deleteSecretsBatch, updateSecretsBatch } from "./secret-batch.service";
import { getSecretById, getSecretByName } from "./secret-get.service";
import { listSecrets } from "./secret-read.service";
import { createSecret, deleteSecret, updateSecret } from "./secret-write.service";

const s = initServer();

type Conditional = { headers: Record<string, string | string[] | undefined> };
type HeaderSink = { setHeader: (name: string, value: string) => unknown };

/**
 * v4 reads carry a strong ETag of the body; a matching If-None-Match answers 304 with no body.
 * The body is computed (and every permission checked) either way: the tag only saves the transfer.
 */
const withEtag = <T>(req: Conditional, res: HeaderSink, body: T) => {
  const etag = `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url").slice(0, 32)}"`;
  res.setHeader("ETag", etag);
  const match = req.headers["if-none-match"];
  const tags = (Array.isArray(match) ? match.join(",") : (match ?? "")).split(",").map((t) => t.trim());
  if (tags.includes(etag) || tags.includes(`W/${etag}`) || tags.includes("*"))
    return { status: 304 as const, body: undefined };
  return ok(body);
};

export const secretsV3Router = (deps: AppDeps) =>
  s.router(contract.secretsV3, {
    list: async ({ query, req, res }) => ok(await listSecrets(contextOf(deps, req, res), query)),
    getById: async ({ params, req, res }) =>
      ok({ secret: await getSecretById(contextOf(deps, req, res), params.secretId) }),
    get: async ({ params, query, req, res }) =>
      ok({
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
    list: async ({ query, req, res }) => withEtag(req, res, await listSecrets(contextOf(deps, req, res), query)),
    batchCreate: async ({ body, req, res }) =>
      ok({ secrets: await createSecretsBatch(contextOf(deps, req, res), body) }),
    batchUpdate: async ({ body, req, res }) =>
      ok({ secrets: await updateSecretsBatch(contextOf(deps, req, res), body) }),
    batchDelete: async ({ body, req, res }) =>
      ok({ secrets: await deleteSecretsBatch(contextOf(deps, req, res), body) }),
    getById: async ({ params, req, res }) =>
      ok({ secret: await getSecretById(contextOf(deps, req, res), params.secretId) }),
    get: async ({ params, query, req, res }) =>
      withEtag(req, res, {
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
