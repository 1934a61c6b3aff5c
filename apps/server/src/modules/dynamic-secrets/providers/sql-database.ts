import { createHash } from "node:crypto";
import pg from "pg";
import type { z } from "zod";
import type { PostgresInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { resolveProviderHost, withDeadline, type ResolvedHost } from "./outbound";
import { assertTemplate, generatePassword, renderTemplate, splitStatements } from "./templates";
import { PROVIDER_DEADLINE_MS, type Provider, type ProviderContext } from "./types";

export type SqlDatabaseInputs = z.infer<typeof PostgresInputsSchema>;

/** The database itself refuses the login after `expiration`, even if no revocation ever ran. */
export const DEFAULT_SQL_CREATION =
  `CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'; ` +
  `GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{{username}}";`;
export const DEFAULT_SQL_REVOCATION = `REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA public FROM "{{username}}"; DROP ROLE IF EXISTS "{{username}}";`;
export const DEFAULT_SQL_RENEW = `ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`;

const MAX_STATEMENTS = 50;

const clientConfig = (inputs: SqlDatabaseInputs, host: ResolvedHost) => ({
  host: host.address,
  port: inputs.port,
  database: inputs.database,
  user: inputs.username,
  password: inputs.password,
  ssl: inputs.ca ? { ca: inputs.ca, servername: host.servername, rejectUnauthorized: true } : undefined,
  connectionTimeoutMillis: 5_000,
  statement_timeout: 5_000,
  query_timeout: 6_000,
  application_name: "keyward",
});

/**
 * Connections to a target are pooled per set of root credentials (in `ctx.pools`): a fresh login
 * per lease costs a TCP handshake and a SCRAM exchange, which dominated lease throughput. Idle
 * connections close after 30 s; a rotated root password simply starts a new pool.
 */
const poolFor = async (inputs: SqlDatabaseInputs, ctx: ProviderContext) => {
  const host = await resolveProviderHost(inputs.host, ctx.outbound);
  const key = createHash("sha256")
    .update(
      JSON.stringify([
        "pg",
        host.address,
        inputs.port,
        inputs.database,
        inputs.username,
        inputs.password,
        inputs.ca ?? "",
      ]),
    )
    .digest("hex");
  const known = ctx.pools.get(key);
  if (known) return known as pg.Pool;
  const pool = new pg.Pool({ ...clientConfig(inputs, host), max: 8, idleTimeoutMillis: 30_000, allowExitOnIdle: true });
  // Idle connections' failures reach the pool; a lent connection's reach only its client (its statement fails too).
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  ctx.pools.set(key, pool);
  return pool;
};

/**
 * Run `work` on a pooled connection, bounded by the provider deadline. A connection that failed,
 * timed out or ran custom statements (which may have changed session state) is not reused as is.
 */
const withClient = async <T>(
  inputs: SqlDatabaseInputs,
  ctx: ProviderContext,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { customStatements?: boolean } = {},
) => {
  let client: pg.PoolClient | undefined;
  let abandoned = false;
  let released = false;
  const release = (destroy: boolean) => {
    if (!client || released) return;
    released = true;
    client.release(destroy);
  };
  const run = async () => {
    // Name resolution counts against the deadline too: a creation must never outlive the job's grace period.
    const pool = await poolFor(inputs, ctx);
    const connected = await pool.connect();
    if (abandoned) {
      connected.release(true);
      throw new Error("abandoned");
    }
    client = connected;
    const result = await work(connected);
    if (options.customStatements) await connected.query("DISCARD ALL");
    return result;
  };
  try {
    const result = await withDeadline(
      PROVIDER_DEADLINE_MS,
      () => {
        abandoned = true;
        release(true);
      },
      run(),
    );
    release(false);
    return result;
  } catch (error) {
    release(true);
    throw error;
  }
};

/** Verifying root credentials takes a fresh login, never a pooled session. */
const verifyLogin = async (inputs: SqlDatabaseInputs, ctx: ProviderContext) => {
  const client = new pg.Client(clientConfig(inputs, await resolveProviderHost(inputs.host, ctx.outbound)));
  client.on("error", () => undefined);
  try {
    await withDeadline(
      PROVIDER_DEADLINE_MS,
      () => void client.end().catch(() => undefined),
      client.connect().then(() => client.query("select 1")),
    );
  } finally {
    await client.end().catch(() => undefined);
  }
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
      {
        customStatements: Boolean(inputs.creationStatement),
      },
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
    withClient(inputs, ctx, async (client) =>
      (
        await client.query<{ rolname: string }>("select rolname from pg_roles where strpos(rolname, $1) > 0", [marker])
      ).rows.map((r) => r.rolname),
    ),
  redact: ({ password: _password, ...rest }) => rest,
};
