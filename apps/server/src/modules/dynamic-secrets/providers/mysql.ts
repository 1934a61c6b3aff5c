import { connect as netConnect, isIP } from "node:net";
import type mysql from "mysql2/promise";
import type { z } from "zod";
import type { MysqlInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { resolveProviderHost, withDeadline } from "./outbound";
import { assertTemplate, generatePassword, renderTemplate, splitStatements } from "./templates";
import { PROVIDER_DEADLINE_MS, type Provider, type ProviderContext } from "./types";

export type MysqlInputs = z.infer<typeof MysqlInputsSchema>;

/**
 * MariaDB and MySQL have no login expiry at a point in time (PASSWORD EXPIRE counts whole days and
 * lets the user set a new password), so the revocation job is what ends these users at expiry.
 */
export const DEFAULT_MYSQL_CREATION =
  "CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'; GRANT SELECT ON `{{database}}`.* TO '{{username}}'@'%';";
export const DEFAULT_MYSQL_REVOCATION = "DROP USER IF EXISTS '{{username}}'@'%';";

const MAX_STATEMENTS = 50;

/**
 * One connection per call, to the vetted address only: the socket is opened here, so mysql2 never
 * resolves the name itself. With a CA the chain is always verified, and the name too when the
 * host is a name (an address has no name to check).
 */
const openConnection = async (inputs: MysqlInputs, ctx: ProviderContext, track: (c: mysql.Connection) => void) => {
  const resolved = await resolveProviderHost(inputs.host, ctx.outbound);
  // Loaded on first use: most instances never lease a MySQL user, and the driver is large.
  const { createConnection } = await import("mysql2/promise");
  const connection = await createConnection({
    host: resolved.servername ?? resolved.address,
    port: inputs.port,
    stream: () => netConnect(inputs.port, resolved.address),
    user: inputs.username,
    password: inputs.password,
    database: inputs.database,
    connectTimeout: 5_000,
    multipleStatements: false,
    ssl: inputs.ca
      ? { ca: inputs.ca, rejectUnauthorized: true, verifyIdentity: !isIP(resolved.servername ?? resolved.address) }
      : undefined,
  });
  connection.on("error", () => undefined);
  track(connection);
  return connection;
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

const withConnection = async <T>(
  inputs: MysqlInputs,
  ctx: ProviderContext,
  work: (connection: mysql.Connection) => Promise<T>,
) => {
  let connection: mysql.Connection | undefined;
  let abandoned = false;
  const track = (created: mysql.Connection) => {
    connection = created;
    if (abandoned) created.destroy();
  };
  try {
    return await withDeadline(
      PROVIDER_DEADLINE_MS,
      () => {
        abandoned = true;
        connection?.destroy();
      },
      openConnection(inputs, ctx, track).then(work),
    );
  } finally {
    if (connection) await (abandoned ? connection.destroy() : close(connection));
  }
};

/**
 * CREATE USER and GRANT commit implicitly in MySQL, so the statements cannot be one transaction: a
 * failure halfway is undone by the revocation statements (the lease's undo or the revocation job).
 */
const runStatements = async (connection: mysql.Connection, rendered: string) => {
  const statements = splitStatements(rendered);
  if (statements.length > MAX_STATEMENTS) throw new BadRequestError(`At most ${MAX_STATEMENTS} statements are allowed`);
  for (const statement of statements) await connection.query(statement);
};

const userExists = async (connection: mysql.Connection, username: string) => {
  const [rows] = await connection.query("SELECT 1 AS found FROM mysql.user WHERE User = ? LIMIT 1", [username]);
  return (rows as unknown[]).length > 0;
};

/** DROP USER leaves open sessions alive; they are ended too (needs CONNECTION ADMIN, so best effort). */
const endSessions = async (connection: mysql.Connection, username: string) => {
  const [rows] = await connection.query("SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?", [
    username,
  ]);
  for (const { id } of rows as { id: number }[]) {
    await connection.query(`KILL CONNECTION ${Number(id)}`).catch(() => undefined);
  }
};

const statementsOf = (inputs: MysqlInputs) => ({
  creation: inputs.creationStatement || DEFAULT_MYSQL_CREATION,
  revocation: inputs.revocationStatement || DEFAULT_MYSQL_REVOCATION,
});

export const mysqlProvider: Provider<MysqlInputs> = {
  maxUsernameLength: 80,
  secretsOf: (inputs) => [inputs.password],
  validate: (inputs) => {
    assertTemplate("SQL creation", inputs.creationStatement, ["username", "password", "expiration", "database"]);
    assertTemplate("SQL renew", inputs.renewStatement, ["username", "expiration", "database"]);
    assertTemplate("SQL revoke", inputs.revocationStatement, ["username", "database"]);
  },
  verifyConnection: async (inputs, ctx) => {
    await withConnection(inputs, ctx, (connection) => connection.query("SELECT 1"));
  },
  create: async (inputs, lease, ctx) => {
    const password = generatePassword(inputs.passwordRequirements);
    const values = {
      username: lease.username,
      password,
      expiration: lease.expireAt.toISOString(),
      database: inputs.database,
    };
    await withConnection(inputs, ctx, (connection) =>
      runStatements(connection, renderTemplate(statementsOf(inputs).creation, values)),
    );
    return { data: { DB_USERNAME: lease.username, DB_PASSWORD: password }, password };
  },
  renew: async (inputs, username, expireAt, ctx) => {
    // Without a renew statement there is nothing to extend on the server: the lease row carries the expiry.
    if (!inputs.renewStatement) return;
    const rendered = renderTemplate(inputs.renewStatement, {
      username,
      expiration: expireAt.toISOString(),
      database: inputs.database,
    });
    await withConnection(inputs, ctx, (connection) => runStatements(connection, rendered));
  },
  revoke: async (inputs, username, ctx) => {
    await withConnection(inputs, ctx, async (connection) => {
      // Already gone: revocation is idempotent, whatever the configured statements would say.
      if (!(await userExists(connection, username))) return;
      await runStatements(
        connection,
        renderTemplate(statementsOf(inputs).revocation, { username, database: inputs.database }),
      );
      await endSessions(connection, username);
    });
  },
  listEntities: (inputs, marker, ctx) =>
    withConnection(inputs, ctx, async (connection) => {
      const [rows] = await connection.query("SELECT DISTINCT User AS name FROM mysql.user WHERE INSTR(User, ?) > 0", [
        marker,
      ]);
      return (rows as { name: string | Buffer }[]).map((r) => r.name.toString());
    }),
  redact: ({ password: _password, ...rest }) => rest,
};
