import { connect as netConnect, type Socket } from "node:net";
import type mysql from "mysql2/promise";
import { CONNECT_TIMEOUT_MS, runConnected, vetHost, type Reach, type Tls } from "./rules";

/** A MariaDB or MySQL server and the login to use there. */
export type MysqlTarget = {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
  tls: Tls;
};

/** A polite COM_QUIT when the server answers, a dropped socket when it does not within a second. */
const close = async (connection: mysql.Connection) => {
  let timer: NodeJS.Timeout | undefined;
  const dropped = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      connection.destroy();
      resolve();
    }, 1_000);
  });
  await Promise.race([connection.end().catch(() => connection.destroy()), dropped]);
  clearTimeout(timer);
};

/**
 * One connection per call, to the vetted address only: the socket is opened here, so mysql2 never
 * resolves the name itself. With TLS the certificate is checked against the CA and, when the host
 * is a name, that name (an address has no name to check), unless `rejectUnauthorized` is off.
 * The server refuses a query holding more than one statement (multipleStatements is off).
 */
export const withMysql = <T>(reach: Reach, target: MysqlTarget, work: (connection: mysql.Connection) => Promise<T>) => {
  let socket: Socket | undefined;
  return runConnected<mysql.Connection | Socket, T>(
    reach,
    {
      label: `MySQL at ${target.host}:${target.port}`,
      secrets: [target.password],
      open: async (keep) => {
        const host = await vetHost(target.host, reach.outbound);
        // Loaded on first use: most instances never reach MySQL, and the driver is large.
        const { createConnection } = await import("mysql2/promise");
        const { tls } = target;
        const connection = await createConnection({
          host: host.servername ?? host.address,
          port: target.port,
          stream: () => {
            socket = netConnect(target.port, host.address);
            keep(socket);
            return socket;
          },
          user: target.username,
          password: target.password,
          database: target.database,
          connectTimeout: CONNECT_TIMEOUT_MS,
          multipleStatements: false,
          ssl: tls
            ? {
                ...(tls.ca ? { ca: tls.ca } : {}),
                rejectUnauthorized: tls.rejectUnauthorized,
                verifyIdentity: tls.rejectUnauthorized && host.servername !== undefined,
              }
            : undefined,
        });
        // A connection lost between queries reports it as an 'error' event, which would end the process unheard.
        connection.on("error", () => undefined);
        keep(connection);
        return connection;
      },
      close: (client, abandoned) => {
        if (client === socket) return void socket.destroy();
        const connection = client as mysql.Connection;
        return abandoned ? connection.destroy() : close(connection);
      },
    },
    (client) => work(client as mysql.Connection),
  );
};
