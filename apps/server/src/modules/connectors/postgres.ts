import pg from "pg";
import {
  CONNECT_TIMEOUT_MS,
  OPERATION_TIMEOUT_MS,
  runConnected,
  tlsOptions,
  vetHost,
  type Reach,
  type Tls,
  type VettedHost,
} from "./rules";

/** A PostgreSQL server and the login to use there. */
export type PostgresTarget = {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
  tls: Tls;
};

export const postgresLabel = (target: { host: string; port: number }) => `PostgreSQL at ${target.host}:${target.port}`;

/** The driver's settings for a vetted host: the connectors' time limits and TLS rule. */
export const postgresConfig = (target: PostgresTarget, host: VettedHost): pg.ClientConfig => ({
  host: host.address,
  port: target.port,
  database: target.database,
  user: target.username,
  password: target.password,
  ssl: tlsOptions(target.tls, host.servername),
  connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  statement_timeout: OPERATION_TIMEOUT_MS,
  // The server's statement_timeout ends a slow statement; this ends a wait on a server that went silent.
  query_timeout: OPERATION_TIMEOUT_MS + 1_000,
  application_name: "keyward",
});

/** One fresh login (never a pooled session), used by `work` and always ended. */
export const withPostgres = <T>(reach: Reach, target: PostgresTarget, work: (client: pg.Client) => Promise<T>) =>
  runConnected<pg.Client, T>(
    reach,
    {
      label: postgresLabel(target),
      secrets: [target.password],
      open: async (keep) => {
        const client = new pg.Client(postgresConfig(target, await vetHost(target.host, reach.outbound)));
        // A connection lost between queries reports it as an 'error' event, which would end the process unheard.
        client.on("error", () => undefined);
        keep(client);
        await client.connect();
        return client;
      },
      close: (client) => client.end(),
    },
    work,
  );

/**
 * Runs `text` as exactly one statement. It goes over the extended query protocol, where PostgreSQL
 * refuses a text holding more than one statement ("cannot insert multiple commands into a prepared
 * statement"); the simple protocol `client.query(text)` uses would run every one of them.
 */
export const queryOneStatement = (client: pg.ClientBase, text: string) =>
  client.query({ text, queryMode: "extended" } as pg.QueryConfig);
