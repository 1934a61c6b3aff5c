import type { AddressInfo } from "node:net";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { createApp } from "../../src/app/create-app";
import { buildDeps } from "../../src/app/deps";
import { createHttpServer } from "../../src/app/server";
import type { TestApp } from "../helpers/app";

export type Instance = { baseUrl: string; client: (token?: string) => KeywardClient; close: () => Promise<void> };

/**
 * Another server process's worth of app (its own deps, caches and pool) on the same PostgreSQL
 * database as `app`; on PGlite there is one process per database, so this is `app` itself.
 */
export const sameDatabaseInstance = async (app: TestApp): Promise<Instance> => {
  if (!app.deps.env.DATABASE_URL) return { baseUrl: app.baseUrl, client: app.client, close: async () => undefined };
  const { deps, handle } = await buildDeps(app.deps.env, { dataDir: "memory://" });
  const server = createHttpServer(createApp(deps), app.deps.env);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    client: (token) => createKeywardClient({ baseUrl, token }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handle.close();
    },
  };
};
