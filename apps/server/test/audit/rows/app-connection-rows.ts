import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { uniqueName, type Tenant } from "../../helpers/tenant";
import { ldapTarget, mysqlTarget, postgresTarget, redisTarget, type Target } from "../../secret-rotations/helpers";
import { ok, type Step } from "./runner";

type ConnectionOperation = Extract<MutatingOperation, `appConnections.${App}.${string}`>;
type App = "postgres" | "mysql" | "redis" | "ldap";

const routes = (tenant: Tenant, app: App) =>
  tenant.admin.appConnections[app] as typeof tenant.admin.appConnections.postgres;

const rowsOf = (app: App, target: () => Promise<Target>): Record<string, Step> => {
  const create = async (tenant: Tenant) =>
    ok(
      await routes(tenant, app).create({
        body: { name: uniqueName("conn"), credentials: (await target()).connection } as never,
      }),
    ).appConnection;
  return {
    [`appConnections.${app}.create`]: async ({ tenant, act }) => {
      const name = uniqueName("conn");
      const body = { name, credentials: (await target()).connection } as never;
      const { appConnection } = ok(await act(() => routes(tenant, app).create({ body })));
      return { projectId: null, metadata: { name, app, connectionId: appConnection.id } };
    },
    [`appConnections.${app}.update`]: async ({ tenant, act }) => {
      const connection = await create(tenant);
      ok(
        await act(() =>
          routes(tenant, app).update({ params: { connectionId: connection.id }, body: { description: "x" } }),
        ),
      );
      return { projectId: null, metadata: { app, connectionId: connection.id, credentialsUpdated: false } };
    },
    [`appConnections.${app}.delete`]: async ({ tenant, act }) => {
      const connection = await create(tenant);
      ok(await act(() => routes(tenant, app).delete({ params: { connectionId: connection.id } })));
      return { projectId: null, metadata: { app, connectionId: connection.id } };
    },
  };
};

export const APP_CONNECTION_STEPS = {
  ...rowsOf("postgres", () => postgresTarget()),
  ...rowsOf("mysql", () => mysqlTarget()),
  ...rowsOf("redis", () => redisTarget()),
  ...rowsOf("ldap", () => ldapTarget()),
} as Record<ConnectionOperation, Step>;
