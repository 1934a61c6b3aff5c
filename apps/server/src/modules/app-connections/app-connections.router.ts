import { initServer } from "@ts-rest/express";
import { APP_CONNECTION_OPTIONS, contract, type AppConnectionAppName } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  createAppConnection,
  deleteAppConnection,
  getAppConnection,
  getAppConnectionByName,
  listAppConnections,
  listAvailableAppConnections,
  updateAppConnection,
} from "./app-connection.manage";

const s = initServer();

/** The same seven routes for each app. */
const appRouter = (deps: AppDeps, app: AppConnectionAppName) =>
  // Every app has the same seven routes: PostgreSQL's types stand for all of them.
  s.router(contract.appConnections.postgres, {
    list: async ({ query, req, res }) => ok(await listAppConnections(contextOf(deps, req, res), app, query.projectId)),
    available: async ({ query, req, res }) =>
      ok(await listAvailableAppConnections(contextOf(deps, req, res), app, query.projectId)),
    get: async ({ params, req, res }) =>
      ok(await getAppConnection(contextOf(deps, req, res), app, params.connectionId)),
    getByName: async ({ params, query, req, res }) =>
      ok(await getAppConnectionByName(contextOf(deps, req, res), app, params.connectionName, query.projectId)),
    create: async ({ body, req, res }) => ok(await createAppConnection(contextOf(deps, req, res), app, body as never)),
    update: async ({ params, body, req, res }) =>
      ok(await updateAppConnection(contextOf(deps, req, res), app, params.connectionId, body as never)),
    delete: async ({ params, req, res }) =>
      ok(await deleteAppConnection(contextOf(deps, req, res), app, params.connectionId)),
  });

export const appConnectionsRouter = (deps: AppDeps) =>
  s.router(contract.appConnections, {
    postgres: appRouter(deps, "postgres"),
    mysql: appRouter(deps, "mysql") as never,
    redis: appRouter(deps, "redis") as never,
    ldap: appRouter(deps, "ldap") as never,
    aws: appRouter(deps, "aws") as never,
    github: appRouter(deps, "github") as never,
    gcp: appRouter(deps, "gcp") as never,
    azureKeyVault: appRouter(deps, "azure-key-vault") as never,
    options: async () => ok({ appConnectionOptions: APP_CONNECTION_OPTIONS }),
    listAll: async ({ query, req, res }) =>
      ok(await listAppConnections(contextOf(deps, req, res), undefined, query.projectId)),
  });
