import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import {
  createAuditLogStream,
  deleteAuditLogStream,
  getAuditLogStream,
  listAuditLogStreams,
  streamProviderOptions,
  updateAuditLogStream,
} from "./streams.service";

const s = initServer();

export const auditLogStreamsRouter = (deps: AppDeps) =>
  s.router(contract.auditLogStreams, {
    options: async () => ok(streamProviderOptions()),
    list: async ({ req, res }) => ok(await listAuditLogStreams(contextOf(deps, req, res))),
    get: async ({ params, req, res }) =>
      ok(await getAuditLogStream(contextOf(deps, req, res), params.provider, params.logStreamId)),
    create: async ({ params, body, req, res }) =>
      ok(await createAuditLogStream(contextOf(deps, req, res), params.provider, body.credentials)),
    update: async ({ params, body, req, res }) =>
      ok(await updateAuditLogStream(contextOf(deps, req, res), params.provider, params.logStreamId, body.credentials)),
    delete: async ({ params, req, res }) =>
      ok(await deleteAuditLogStream(contextOf(deps, req, res), params.provider, params.logStreamId)),
  });
