import { createHash, randomBytes } from "node:crypto";
import { Attribute, Change } from "ldapts";
import pg from "pg";
import type { SecretRotationType } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { BadRequestError } from "../../errors";
import { generateAlphanumericPassword } from "../connectors/credentials";
import { queryOneStatement, withLdap, withMysql, withPostgres, withRedis } from "../app-connections/app-clients";
import type { UsableConnection } from "../app-connections/app-connection.service";
import { renderRotationStatement, type StatementDialect } from "./rotation-statement";

/** One of a rotation's two credentials (for LDAP the username is the entry's DN). */
export type Credential = { username: string; password: string };

export type RotationParameters = {
  username1?: string;
  username2?: string;
  dn?: string;
  rotationStatement?: string;
};

/** What a kind of rotation does on the outside system. Every step may be repeated (a rotation resumed after a crash). */
export type Rotator = {
  /** The dialect of a custom rotation statement; undefined where the kind takes none. */
  dialect?: StatementDialect;
  /** The user of each of the two slots. */
  usernames: (params: RotationParameters) => [string, string];
  /** At create: the users exist and the connection may change their passwords (400 naming what is wrong). */
  check: (deps: AppDeps, conn: UsableConnection, params: RotationParameters) => Promise<void>;
  /** The slot's user gets `cred.password`; `other` is the other slot's credential, which stays valid. */
  setPassword: (
    deps: AppDeps,
    conn: UsableConnection,
    params: RotationParameters,
    cred: Credential,
    other: Credential | undefined,
  ) => Promise<void>;
  /** Throws unless `cred` logs in. */
  verify: (deps: AppDeps, conn: UsableConnection, cred: Credential) => Promise<void>;
  /** The mapped secrets' values for the active credential, by mapping field. */
  values: (cred: Credential) => Record<string, string>;
};

const sql = (conn: UsableConnection) => {
  if (conn.app !== "postgres" && conn.app !== "mysql") throw new Error(`not a SQL connection: ${conn.app}`);
  return conn.credentials;
};

const pair = (params: RotationParameters): [string, string] => [params.username1!, params.username2!];

const postgres: Rotator = {
  dialect: "postgres",
  usernames: pair,
  check: async (deps, conn, params) => {
    const [u1, u2] = pair(params);
    await withPostgres(deps, sql(conn), async (client) => {
      const { rows } = await client.query<{ rolname: string }>("select rolname from pg_roles where rolname = any($1)", [
        [u1, u2],
      ]);
      const missing = [u1, u2].filter((u) => !rows.some((r) => r.rolname === u));
      if (missing.length > 0)
        throw new BadRequestError(`The following users do not exist in the database: ${missing.join(", ")}`);
      // ALTER ROLE is transactional: try it on both users and roll back, so a missing right shows now.
      await client.query("begin");
      try {
        for (const user of [u1, u2])
          await client.query(
            `alter user ${pg.escapeIdentifier(user)} with password ${pg.escapeLiteral(generateAlphanumericPassword(48))}`,
          );
      } catch (error) {
        throw new BadRequestError(
          `The connection's user may not change the users' passwords: ${(error as Error).message}`,
        );
      } finally {
        await client.query("rollback");
      }
    });
  },
  setPassword: async (deps, conn, params, cred) => {
    const creds = sql(conn);
    // Exactly one statement, built here: the default, or the custom one with its values quoted in place.
    const statement = params.rotationStatement
      ? renderRotationStatement("postgres", params.rotationStatement, { ...cred, database: creds.database })
      : `alter user ${pg.escapeIdentifier(cred.username)} with password ${pg.escapeLiteral(cred.password)}`;
    await withPostgres(deps, creds, (client) => queryOneStatement(client, statement));
  },
  verify: (deps, conn, cred) =>
    withPostgres(deps, sql(conn), (client) => client.query("select 1"), cred).then(() => undefined),
  values: (cred) => ({ username: cred.username, password: cred.password }),
};

/** The host part of a MariaDB/MySQL account (the first one of that user name, '%' when none is visible). */
const accountHost = async (conn: Awaited<Parameters<Parameters<typeof withMysql>[2]>[0]>, user: string) => {
  const [rows] = (await conn.query("select Host as host from mysql.user where User = ? order by Host = '%' desc", [
    user,
  ])) as unknown as [{ host: string }[]];
  return rows[0]?.host;
};

const mysql: Rotator = {
  dialect: "mysql",
  usernames: pair,
  check: async (deps, conn, params) => {
    const [u1, u2] = pair(params);
    await withMysql(deps, sql(conn), async (client) => {
      const missing: string[] = [];
      for (const user of [u1, u2]) if ((await accountHost(client, user)) === undefined) missing.push(user);
      if (missing.length > 0)
        throw new BadRequestError(
          `The following users do not exist in the database (or are not visible to the connection): ${missing.join(", ")}`,
        );
      const [grants] = (await client.query("show grants")) as unknown as [Record<string, string>[]];
      const text = grants.map((g) => Object.values(g).join(" ")).join("\n");
      if (!/ALL PRIVILEGES ON \*\.\*|CREATE USER/i.test(text))
        throw new BadRequestError("The connection's user may not change the users' passwords: it lacks CREATE USER");
    });
  },
  setPassword: async (deps, conn, params, cred) => {
    const creds = sql(conn);
    await withMysql(deps, creds, async (client) => {
      // One statement per query: the connection does not allow several (multipleStatements is off).
      if (params.rotationStatement) {
        await client.query(
          renderRotationStatement("mysql", params.rotationStatement, { ...cred, database: creds.database }),
        );
        return;
      }
      const host = (await accountHost(client, cred.username)) ?? "%";
      await client.query("alter user ?@? identified by ?", [cred.username, host, cred.password]);
    });
  },
  verify: (deps, conn, cred) =>
    withMysql(deps, sql(conn), (client) => client.query("select 1"), cred).then(() => undefined),
  values: (cred) => ({ username: cred.username, password: cred.password }),
};

const redisCreds = (conn: UsableConnection) => {
  if (conn.app !== "redis") throw new Error(`not a Redis connection: ${conn.app}`);
  return conn.credentials;
};

const redis: Rotator = {
  usernames: pair,
  check: async (deps, conn, params) => {
    const [u1, u2] = pair(params);
    await withRedis(deps, redisCreds(conn), async (client) => {
      const missing: string[] = [];
      for (const user of [u1, u2]) {
        const found = await client.call("ACL", "GETUSER", user).catch((error: Error) => {
          throw new BadRequestError(`The connection's user may not manage ACL users: ${error.message}`);
        });
        if (found === null) missing.push(user);
      }
      if (missing.length > 0) throw new BadRequestError(`The following ACL users do not exist: ${missing.join(", ")}`);
    });
  },
  setPassword: async (deps, conn, _params, cred) => {
    await withRedis(deps, redisCreds(conn), (client) =>
      client.call("ACL", "SETUSER", cred.username, "resetpass", `>${cred.password}`),
    );
  },
  verify: (deps, conn, cred) =>
    withRedis(deps, redisCreds(conn), (client) => client.ping(), cred).then(() => undefined),
  values: (cred) => ({ username: cred.username, password: cred.password }),
};

const ldapCreds = (conn: UsableConnection) => {
  if (conn.app !== "ldap") throw new Error(`not an LDAP connection: ${conn.app}`);
  return conn.credentials;
};

/** RFC 2307 salted SHA-1, which OpenLDAP checks binds against without storing the password itself. */
const ssha = (password: string) => {
  const salt = randomBytes(8);
  const digest = createHash("sha1").update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString("base64")}`;
};

/** One entry, two passwords: the new one and the previous one, both valid until the next rotation. */
const ldap: Rotator = {
  usernames: (params) => [params.dn!, params.dn!],
  check: async (deps, conn, params) => {
    const creds = ldapCreds(conn);
    if (creds.provider !== "openldap")
      throw new BadRequestError("LDAP password rotation supports OpenLDAP directories (provider openldap)");
    await withLdap(deps, creds, async (client) => {
      const { searchEntries } = await client
        .search(params.dn!, { scope: "base", attributes: ["dn"] })
        .catch((error: Error) => {
          throw new BadRequestError(`The entry ${params.dn} cannot be read: ${error.message}`);
        });
      if (searchEntries.length === 0) throw new BadRequestError(`The entry ${params.dn} does not exist`);
    });
  },
  setPassword: async (deps, conn, params, cred, other) => {
    const values = [ssha(cred.password), ...(other ? [ssha(other.password)] : [])];
    await withLdap(deps, ldapCreds(conn), (client) =>
      client.modify(
        params.dn!,
        new Change({ operation: "replace", modification: new Attribute({ type: "userPassword", values }) }),
      ),
    );
  },
  verify: (deps, conn, cred) => withLdap(deps, ldapCreds(conn), async () => undefined, cred),
  values: (cred) => ({ dn: cred.username, password: cred.password }),
};

export const ROTATORS: Record<SecretRotationType, Rotator> = {
  "postgres-credentials": postgres,
  "mysql-credentials": mysql,
  "redis-credentials": redis,
  "ldap-password": ldap,
};
