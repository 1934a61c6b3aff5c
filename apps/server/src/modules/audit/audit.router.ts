import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  listAuditEventTypes,
  listOrganizationAuditLogs,
  setProjectAuditRetention,
  verifyAuditLogs,
} from "./audit.service";

const s = initServer();

export const auditLogsRouter = (deps: AppDeps) =>
  s.router(contract.auditLogs, {
    list: async ({ query, req, res }) => ok(await listOrganizationAuditLogs(contextOf(deps, req, res), query)),
    eventTypes: async ({ req, res }) => ok(await listAuditEventTypes(contextOf(deps, req, res))),
    verify: async ({ query, req, res }) => ok(await verifyAuditLogs(contextOf(deps, req, res), query)),
    listProject: async ({ params, query, req, res }) =>
      ok(
        await listOrganizationAuditLogs(contextOf(deps, req, res), {
          ...query,
          projectId: params.projectId,
          eventType: query.eventType ? [query.eventType] : undefined,
        }),
      ),
    setProjectRetention: async ({ params, body, req, res }) =>
      ok(await setProjectAuditRetention(contextOf(deps, req, res), params.projectId, body.auditLogsRetentionDays)),
  });
