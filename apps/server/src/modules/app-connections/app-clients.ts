import { Client as LdapClient } from "ldapts";
import mysql from "mysql2/promise";
import pg from "pg";
import Redis from "ioredis";
import type { AppDeps } from "../../context";
import { resolveProviderHost, withDeadline } from "../dynamic-secrets/providers/outbound";
import type {
  LdapConnectionCredentials,
  Login,
  RedisConnectionCredentials,
  SqlConnectionCredentials,
} from "./app-connection.types";

/** How long one use of an outside system may take, connecting included. */
export const APP_DEADLINE_MS = 10_000;

const tlsOf = (
  creds: { sslEnabled: boolean; sslRejectUnauthorized: boolean; sslCertificate?: string },
  servername?: string,
) =>
  creds.sslEnabled
    ? {
        rejectUnauthorized: creds.sslRejectUnauthorized,
        ...(creds.sslCertificate ? { ca: creds.sslCertificate } : {}),
        ...(servername ? { servername } : {}),
      }
    : undefined;

/**
 * One place that knows how to reach each kind of app: the host is resolved once and vetted against
 * ALLOW_PRIVATE_OUTBOUND (the client dials the vetted address), TLS follows the connection's ssl*
 * fields, the whole use is bounded by APP_DEADLINE_MS, and the client is always closed. `login`
 * replaces the connection's own user and password (to check that a rotated credential works).
 */
export const withPostgres = async <T>(
  deps: AppDeps,
  creds: SqlConnectionCredentials,
  work: (client: pg.Client) => Promise<T>,
  login?: Login,
): Promise<T> => {
  const host = await resolveProviderHost(creds.host, deps.env.ALLOW_PRIVATE_OUTBOUND);
  const client = new pg.Client({
    host: host.address,
    port: creds.port,
    database: creds.database,
    user: login?.username ?? creds.username,
    password: login?.password ?? creds.password,
    ssl: tlsOf(creds, host.servername),
    connectionTimeoutMillis: APP_DEADLINE_MS,
    statement_timeout: APP_DEADLINE_MS,
    application_name: "keyward",
  });
  client.on("error", () => undefined);
  try {
    return await withDeadline(
      APP_DEADLINE_MS,
      () => void client.end().catch(() => undefined),
      client.connect().then(() => work(client)),
    );
  } finally {
    await client.end().catch(() => undefined);
  }
};

/**
 * Runs `text` as exactly one statement. It goes over the extended query protocol, where PostgreSQL
 * refuses a text holding more than one statement ("cannot insert multiple commands into a prepared
 * statement"); the simple protocol `client.query(text)` uses would run every one of them.
 */
export const queryOneStatement = (client: pg.Client, text: string) =>
  client.query({ text, queryMode: "extended" } as pg.QueryConfig);

export const withMysql = async <T>(
  deps: AppDeps,
  creds: SqlConnectionCredentials,
  work: (connection: mysql.Connection) => Promise<T>,
  login?: Login,
): Promise<T> => {
  const host = await resolveProviderHost(creds.host, deps.env.ALLOW_PRIVATE_OUTBOUND);
  let connection: mysql.Connection | undefined;
  try {
    return await withDeadline(
      APP_DEADLINE_MS,
      () => connection?.destroy(),
      (async () => {
        connection = await mysql.createConnection({
          host: host.address,
          port: creds.port,
          database: creds.database,
          user: login?.username ?? creds.username,
          password: login?.password ?? creds.password,
          ssl: tlsOf(creds, host.servername),
          connectTimeout: APP_DEADLINE_MS,
          // The server then refuses a query holding more than one statement.
          multipleStatements: false,
        });
        // A connection lost between queries reports it as an 'error' event, which would end the process unheard.
        connection.on("error", () => undefined);
        return work(connection);
      })(),
    );
  } finally {
    await connection?.end().catch(() => connection?.destroy());
  }
};

export const withRedis = async <T>(
  deps: AppDeps,
  creds: RedisConnectionCredentials,
  work: (redis: Redis) => Promise<T>,
  login?: Login,
): Promise<T> => {
  const host = await resolveProviderHost(creds.host, deps.env.ALLOW_PRIVATE_OUTBOUND);
  const redis = new Redis({
    host: host.address,
    port: creds.port,
    username: login?.username ?? creds.username,
    password: login?.password ?? creds.password,
    tls: tlsOf(creds, host.servername),
    lazyConnect: true,
    enableReadyCheck: false,
    connectTimeout: APP_DEADLINE_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on("error", () => undefined);
  try {
    return await withDeadline(
      APP_DEADLINE_MS,
      () => redis.disconnect(),
      redis.connect().then(() => work(redis)),
    );
  } finally {
    redis.disconnect();
  }
};

export const withLdap = async <T>(
  deps: AppDeps,
  creds: LdapConnectionCredentials,
  work: (client: LdapClient) => Promise<T>,
  login?: Login,
): Promise<T> => {
  const url = new URL(creds.url);
  const host = await resolveProviderHost(url.hostname, deps.env.ALLOW_PRIVATE_OUTBOUND);
  const secure = url.protocol === "ldaps:";
  const port = url.port || (secure ? "636" : "389");
  const address = host.address.includes(":") ? `[${host.address}]` : host.address;
  const client = new LdapClient({
    url: `${url.protocol}//${address}:${port}`,
    timeout: APP_DEADLINE_MS,
    connectTimeout: APP_DEADLINE_MS,
    tlsOptions: secure
      ? {
          rejectUnauthorized: creds.sslRejectUnauthorized,
          ...(creds.sslCertificate ? { ca: creds.sslCertificate } : {}),
          ...(host.servername ? { servername: host.servername } : {}),
        }
      : undefined,
  });
  try {
    return await withDeadline(
      APP_DEADLINE_MS,
      () => void client.unbind().catch(() => undefined),
      client.bind(login?.username ?? creds.dn, login?.password ?? creds.password).then(() => work(client)),
    );
  } finally {
    await client.unbind().catch(() => undefined);
  }
};
