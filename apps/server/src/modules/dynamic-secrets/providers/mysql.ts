import type mysql from "mysql2/promise";
import type { z } from "zod";
import type { MysqlInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { generatePassword } from "../../connectors/credentials";
import { withMysql } from "../../connectors/mysql";
import { tlsOfCa } from "../../connectors/rules";
import { assertTemplate, renderTemplate, splitStatements } from "./templates";
import type { Provider, ProviderContext } from "./types";
import { keysetPages } from "./entity-pages";

export type MysqlInputs = z.infer<typeof MysqlInputsSchema>;

/**
 * MariaDB and MySQL have no login expiry at a point in time (PASSWORD EXPIRE counts whole days and
 * lets the user set a new password), so the revocation job is what ends these users at expiry.
 */
export const DEFAULT_MYSQL_CREATION =
  "CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'; GRANT SELECT ON `{{database}}`.* TO '{{username}}'@'%';";
export const DEFAULT_MYSQL_REVOCATION = "DROP USER IF EXISTS '{{username}}'@'%';";

const MAX_STATEMENTS = 50;

/** One connection per call as the root user (see connectors/mysql.ts); `secrets` are passwords being set. */
const withConnection = <T>(
  inputs: MysqlInputs,
  ctx: ProviderContext,
  work: (connection: mysql.Connection) => Promise<T>,
  secrets: string[] = [],
) =>
  withMysql(
    { ...ctx, secrets },
    {
      host: inputs.host,
      port: inputs.port,
      database: inputs.database,
      username: inputs.username,
      password: inputs.password,
      tls: tlsOfCa(inputs.ca),
    },
    work,
  );

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
    await withConnection(
      inputs,
      ctx,
      (connection) => runStatements(connection, renderTemplate(statementsOf(inputs).creation, values)),
      [password],
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
    keysetPages((after, limit) =>
      withConnection(inputs, ctx, async (connection) => {
        // User names compare as binary strings (the column's collation), the order the page follows.
        const [rows] = await connection.query(
          "SELECT DISTINCT User AS name FROM mysql.user WHERE INSTR(User, ?) > 0 AND User > ? ORDER BY User LIMIT ?",
          [marker, after, limit],
        );
        return (rows as { name: string | Buffer }[]).map((r) => r.name.toString());
      }),
    ),
  redact: ({ password: _password, ...rest }) => rest,
};
