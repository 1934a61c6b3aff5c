import type { Redis } from "ioredis";
import {
  CONNECT_TIMEOUT_MS,
  OPERATION_TIMEOUT_MS,
  runConnected,
  tlsOptions,
  vetHost,
  type Reach,
  type Tls,
} from "./rules";

/** A Redis server and the ACL user to log in as. */
export type RedisTarget = { host: string; port: number; username?: string; password?: string; tls: Tls };

/** One connection per call, no retries and no offline queue, always disconnected afterwards. */
export const withRedis = <T>(reach: Reach, target: RedisTarget, work: (client: Redis) => Promise<T>) =>
  runConnected<Redis, T>(
    reach,
    {
      label: `Redis at ${target.host}:${target.port}`,
      secrets: [target.password],
      open: async (keep) => {
        const host = await vetHost(target.host, reach.outbound);
        // Loaded on first use: most instances never reach Redis, and the client is large.
        const { Redis } = await import("ioredis");
        const client = new Redis({
          host: host.address,
          port: target.port,
          username: target.username || undefined,
          password: target.password || undefined,
          tls: tlsOptions(target.tls, host.servername),
          lazyConnect: true,
          // The ready check sends INFO, which a user allowed only a few commands may not run.
          enableReadyCheck: false,
          connectTimeout: CONNECT_TIMEOUT_MS,
          commandTimeout: OPERATION_TIMEOUT_MS,
          maxRetriesPerRequest: 0,
          enableOfflineQueue: false,
          retryStrategy: () => null,
        });
        client.on("error", () => undefined);
        keep(client);
        await client.connect();
        return client;
      },
      close: (client) => client.disconnect(),
    },
    work,
  );
