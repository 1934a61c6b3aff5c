import type pg from "pg";
import type { z } from "zod";
import type { PostgresInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { generatePassword } from "../../connectors/credentials";
import { withPostgres, type PostgresTarget } from "../../connectors/postgres";
import { withPooledPostgres } from "../../connectors/postgres-pool";
import { tlsOfCa } from "../../connectors/rules";
import { assertTemplate, renderTemplate, splitStatements } from "./templates";
import type { Provider, ProviderContext } from "./types";
import { keysetPages } from "./entity-pages";

export type SqlDatabaseInputs = z.infer<typeof PostgresInputsSchema>;

/** The database itself refuses the login after `expiration`, even if no revocation ever ran. */
export const DEFAULT_SQL_CREATION =
  `CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'; ` +
  `GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{{username}}";`;
export const DEFAULT_SQL_REVOCATION = `REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA public FROM "{{username}}"; DROP ROLE IF EXISTS "{{username}}";`;
export const DEFAULT_SQL_RENEW = `ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`;

const MAX_STATEMENTS = 50;

const targetOf = (inputs: SqlDatabaseInputs): PostgresTarget => ({
  host: inputs.host,
  port: inputs.port,
  database: inputs.database,
  username: inputs.username,
  password: inputs.password,
  tls: tlsOfCa(inputs.ca),
});

/**
 * Run `work` on a pooled connection to the target (pooled per set of root credentials in
 * `ctx.pools`). `secrets` are passwords being set, kept out of any error.
 */
const withClient = <T>(
  inputs: SqlDatabaseInputs,
  ctx: ProviderContext,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { customStatements?: boolean; secrets?: string[] } = {},
) =>
  withPooledPostgres({ ...ctx, secrets: options.secrets }, targetOf(inputs), work, {
    resetAfter: options.customStatements,
  });

/** Verifying root credentials takes a fresh login, never a pooled session. */
const verifyLogin = async (inputs: SqlDatabaseInputs, ctx: ProviderContext) => {
  await withPostgres(ctx, targetOf(inputs), (client) => client.query("select 1"));
};

/** The statements run in one transaction on the target: all of them or none. */
const runInTransaction = async (client: pg.PoolClient, statements: string[]) => {
  if (statements.length > MAX_STATEMENTS) throw new BadRequestError(`At most ${MAX_STATEMENTS} statements are allowed`);
  await client.query("BEGIN");
  try {
    for (const statement of statements) await client.query(statement);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
};

const roleOid = async (client: pg.PoolClient, username: string) =>
  (await client.query<{ oid: string }>("select oid::text as oid from pg_roles where rolname = $1", [username])).rows[0]
    ?.oid;

/** Live sessions of a revoked role are ended too; needs pg_signal_backend, so it is best effort. */
const terminateSessions = (client: pg.PoolClient, oid: string) =>
  client
    .query("select pg_terminate_backend(pid) from pg_stat_activity where usesysid = $1::oid", [oid])
    .catch(() => undefined);

const statementsOf = (inputs: SqlDatabaseInputs) => ({
  creation: inputs.creationStatement || DEFAULT_SQL_CREATION,
  revocation: inputs.revocationStatement || DEFAULT_SQL_REVOCATION,
  renew: inputs.renewStatement || DEFAULT_SQL_RENEW,
});

export const sqlDatabaseProvider: Provider<SqlDatabaseInputs> = {
  maxUsernameLength: 63,
  secretsOf: (inputs) => [inputs.password],
  validate: (inputs) => {
    assertTemplate("SQL creation", inputs.creationStatement, ["username", "password", "expiration", "database"]);
    assertTemplate("SQL renew", inputs.renewStatement, ["username", "expiration", "database"]);
    assertTemplate("SQL revoke", inputs.revocationStatement, ["username", "database"]);
  },
  verifyConnection: verifyLogin,
  create: async (inputs, lease, ctx) => {
    const password = generatePassword(inputs.passwordRequirements);
    const values = {
      username: lease.username,
      password,
      expiration: lease.expireAt.toISOString(),
      database: inputs.database,
    };
    await withClient(
      inputs,
      ctx,
      (client) => runInTransaction(client, splitStatements(renderTemplate(statementsOf(inputs).creation, values))),
      { customStatements: Boolean(inputs.creationStatement), secrets: [password] },
    );
    return { data: { DB_USERNAME: lease.username, DB_PASSWORD: password }, password };
  },
  renew: async (inputs, username, expireAt, ctx) => {
    const values = { username, expiration: expireAt.toISOString(), database: inputs.database };
    await withClient(
      inputs,
      ctx,
      (client) => runInTransaction(client, splitStatements(renderTemplate(statementsOf(inputs).renew, values))),
      {
        customStatements: Boolean(inputs.renewStatement),
      },
    );
  },
  revoke: async (inputs, username, ctx) => {
    await withClient(
      inputs,
      ctx,
      async (client) => {
        const oid = await roleOid(client, username);
        // Already gone: revocation is idempotent, whatever the configured statements would say.
        if (oid === undefined) return;
        await runInTransaction(
          client,
          splitStatements(renderTemplate(statementsOf(inputs).revocation, { username, database: inputs.database })),
        );
        // Sessions keep their role's oid after DROP ROLE, so this also catches logins made meanwhile.
        await terminateSessions(client, oid);
      },
      { customStatements: Boolean(inputs.revocationStatement) },
    );
  },
  listEntities: (inputs, marker, ctx) =>
    keysetPages((after, limit) =>
      withClient(inputs, ctx, async (client) =>
        (
          await client.query<{ rolname: string }>(
            "select rolname from pg_roles where strpos(rolname, $1) > 0 and rolname > $2::name order by rolname limit $3",
            [marker, after, limit],
          )
        ).rows.map((r) => r.rolname),
      ),
    ),
  redact: ({ password: _password, ...rest }) => rest,
};
