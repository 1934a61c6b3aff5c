import { randomBytes, randomUUID } from "node:crypto";
import { Client as LdapClient } from "ldapts";
import mysql from "mysql2/promise";
import pg from "pg";
import { Redis } from "ioredis";
import type { AppDeps } from "../../src/context";
import { sealConnectionCredentials } from "../../src/modules/app-connections/app-connection.credentials";
import { sql } from "kysely";
import type { Tenant } from "../helpers/tenant";
import { canLogin as canLoginToPostgres, canLoginToRedis, targetUrl } from "../dynamic-secrets/helpers";

const suffix = () => randomBytes(4).toString("hex");

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the global setup did not start its server`);
  return value;
};

/** An app connection written straight to the table (its routes are tested on their own), sealed as the server seals it. */
export const insertConnection = async (
  deps: AppDeps,
  orgId: string,
  app: "postgres" | "mysql" | "redis" | "ldap",
  credentials: Record<string, unknown>,
  projectId: string | null = null,
) => {
  const id = randomUUID();
  await deps.db
    .insertInto("app_connections")
    .values({
      id,
      org_id: orgId,
      project_id: projectId,
      app,
      name: `conn-${suffix()}`,
      method: app === "ldap" ? "simple-bind" : "username-and-password",
      encrypted_credentials: sealConnectionCredentials(deps, id, credentials),
      credentials_hash: "test",
    })
    .execute();
  return id;
};

const tls = { sslEnabled: false, sslRejectUnauthorized: false };

/** PostgreSQL: the target's superuser as the connection, and two login roles to rotate. */
export const postgresTarget = async (options: { weak?: boolean } = {}) => {
  const url = targetUrl();
  const users = [`rot_a_${suffix()}`, `rot_b_${suffix()}`];
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  let connection = {
    host: url.hostname,
    port: Number(url.port),
    database: "postgres",
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ...tls,
  };
  try {
    for (const user of users) await admin.query(`create role ${user} login password 'initial-${suffix()}'`);
    if (options.weak) {
      const weak = `rot_weak_${suffix()}`;
      const password = `weak-${suffix()}`;
      await admin.query(`create role ${weak} login password '${password}'`);
      connection = { ...connection, username: weak, password };
    }
  } finally {
    await admin.end();
  }

  return {
    app: "postgres" as const,
    type: "postgres-credentials" as const,
    connection,
    parameters: { username1: users[0]!, username2: users[1]! },
    canLogin: canLoginToPostgres,
  };
};

/** MariaDB: its root account as the connection, and two users to rotate. */
export const mysqlTarget = async () => {
  const url = new URL(env("KEYWARD_TEST_MARIADB_URL"));
  const base = {
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
  const users = [`rot_a_${suffix()}`, `rot_b_${suffix()}`];
  const ca = env("KEYWARD_TEST_MARIADB_CA");
  const admin = await mysql.createConnection({ ...base, ssl: { ca } });
  try {
    for (const user of users) {
      await admin.query("create user ?@'%' identified by ?", [user, `initial-${suffix()}`]);
      await admin.query(`grant select on \`${url.pathname.slice(1) || "keyward"}\`.* to ?@'%'`, [user]);
    }
  } finally {
    await admin.end();
  }
  const canLogin = async (user: string, password: string) => {
    const conn = await mysql
      .createConnection({ host: base.host, port: base.port, user, password, ssl: { ca } })
      .catch(() => undefined);
    if (!conn) return false;
    await conn.end();
    return true;
  };
  return {
    app: "mysql" as const,
    type: "mysql-credentials" as const,
    // MariaDB's root logs in over TLS only, checked against the test CA.
    connection: {
      host: base.host,
      port: base.port,
      database: url.pathname.slice(1) || "keyward",
      username: base.user,
      password: base.password,
      sslEnabled: true,
      sslRejectUnauthorized: true,
      sslCertificate: ca,
    },
    parameters: { username1: users[0]!, username2: users[1]! },
    canLogin,
  };
};

/** Redis: the default user as the connection, and two ACL users to rotate. */
export const redisTarget = async () => {
  const url = new URL(env("KEYWARD_TEST_REDIS_URL"));
  const base = { host: url.hostname, port: Number(url.port) };
  const users = [`rot_a_${suffix()}`, `rot_b_${suffix()}`];
  const admin = new Redis({ ...base, username: "default", password: decodeURIComponent(url.password) });
  try {
    for (const user of users) await admin.call("ACL", "SETUSER", user, "on", `>initial-${suffix()}`, "~*", "+ping");
  } finally {
    admin.disconnect();
  }

  return {
    app: "redis" as const,
    type: "redis-credentials" as const,
    connection: { ...base, username: "default", password: decodeURIComponent(url.password), ...tls },
    parameters: { username1: users[0]!, username2: users[1]! },
    canLogin: canLoginToRedis,
  };
};

/** OpenLDAP: its admin as the connection, and one entry whose password rotates. */
export const ldapTarget = async () => {
  const url = env("KEYWARD_TEST_LDAP_URL");
  const adminDn = env("KEYWARD_TEST_LDAP_ADMIN_DN");
  const adminPassword = env("KEYWARD_TEST_LDAP_ADMIN_PASSWORD");
  const dn = `uid=rot-${suffix()},${env("KEYWARD_TEST_LDAP_BASE_DN")}`;
  const admin = new LdapClient({ url });
  await admin.bind(adminDn, adminPassword);
  try {
    await admin.add(dn, {
      objectClass: ["inetOrgPerson"],
      cn: "rotated",
      sn: "rotated",
      uid: dn.split(",")[0]!.slice(4),
      userPassword: `initial-${suffix()}`,
    });
  } finally {
    await admin.unbind();
  }
  const canLogin = async (who: string, password: string) => {
    const client = new LdapClient({ url });
    try {
      await client.bind(who, password);
      return true;
    } catch {
      return false;
    } finally {
      await client.unbind().catch(() => undefined);
    }
  };
  return {
    app: "ldap" as const,
    type: "ldap-password" as const,
    connection: { provider: "openldap", url, dn: adminDn, password: adminPassword, sslRejectUnauthorized: true },
    parameters: { dn },
    canLogin,
  };
};

export type Target = Awaited<
  ReturnType<typeof postgresTarget | typeof mysqlTarget | typeof redisTarget | typeof ldapTarget>
>;

/** The mapping fields of a target's rotation type. */
export const mappingOf = (target: Target, prefix: string): Record<string, string> =>
  target.type === "ldap-password"
    ? { dn: `${prefix}_DN`, password: `${prefix}_PASSWORD` }
    : { username: `${prefix}_USERNAME`, password: `${prefix}_PASSWORD` };

/** The contract's routes of a target's rotation type. */
export const routesOf = (tenant: Tenant, target: Target) => {
  const all = tenant.admin.secretRotations;
  return (
    {
      "postgres-credentials": all.postgresCredentials,
      "mysql-credentials": all.mysqlCredentials,
      "redis-credentials": all.redisCredentials,
      "ldap-password": all.ldapPassword,
    } as const
  )[target.type] as typeof all.postgresCredentials;
};

/** Whether a rotation holds an intent (a rotation in progress). */
export const hasIntent = async (deps: AppDeps, id: string) =>
  (
    await sql<{
      n: number;
    }>`select count(*)::int as n from secret_rotations where id = ${id} and encrypted_intent is not null`.execute(
      deps.db,
    )
  ).rows[0]!.n === 1;
