import { Client } from "ldapts";
import mysql from "mysql2/promise";
import { expectOk, uniqueName } from "../helpers/tenant";
import { scopeOf, type LeaseScope } from "./helpers";

/** The real MariaDB, RabbitMQ and slapd the global setup started (test/services), as the suites use them. */
const required = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the global setup did not start its server`);
  return value;
};

export const mariadbUrl = () => new URL(required("KEYWARD_TEST_MARIADB_URL"));
export const mariadbCa = () => required("KEYWARD_TEST_MARIADB_CA");
export const otherCa = () => required("KEYWARD_TEST_MARIADB_OTHER_CA");

/** Provider inputs for MariaDB as its TLS-only root, trusting the test CA. */
export const mysqlInputs = (overrides: Record<string, unknown> = {}) => {
  const url = mariadbUrl();
  return {
    client: "mysql2" as const,
    host: url.hostname,
    port: Number(url.port),
    database: url.pathname.slice(1),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ca: mariadbCa(),
    ...overrides,
  };
};

export const mariadbSession = async (user: string, password: string) => {
  const connection = await mariadbConnection(user, password);
  connection.on("error", () => undefined);
  return connection;
};

const mariadbConnection = (user: string, password: string) => {
  const url = mariadbUrl();
  return mysql.createConnection({
    host: url.hostname,
    port: Number(url.port),
    user,
    password,
    database: url.pathname.slice(1),
    connectTimeout: 5_000,
    ssl: { ca: mariadbCa() },
  });
};

/** Whether these credentials log in to MariaDB and may read the test table right now. */
export const canLoginToMariadb = async (user: string, password: string) => {
  try {
    const connection = await mariadbConnection(user, password);
    try {
      const [rows] = await connection.query("SELECT text FROM greetings WHERE id = 1");
      return (rows as { text: string }[])[0]?.text === "hello";
    } finally {
      await connection.end();
    }
  } catch {
    return false;
  }
};

export const mariadbQuery = async <R>(statement: string, params: unknown[] = []) => {
  const url = mariadbUrl();
  const connection = await mariadbConnection(decodeURIComponent(url.username), decodeURIComponent(url.password));
  try {
    return (await connection.query(statement, params))[0] as R[];
  } finally {
    await connection.end();
  }
};

export const mariadbUserExists = async (user: string) =>
  (await mariadbQuery("SELECT 1 FROM mysql.user WHERE User = ?", [user])).length > 0;

export const rabbitUrl = () => new URL(required("KEYWARD_TEST_RABBITMQ_URL"));

export const rabbitInputs = (overrides: Record<string, unknown> = {}) => {
  const url = rabbitUrl();
  return {
    host: `http://${url.hostname}`,
    port: Number(url.port),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    tags: ["management"],
    virtualHost: { name: "/", permissions: { read: ".*", write: "^amq\\.gen.*", configure: "" } },
    ...overrides,
  };
};

/** A management API call as `user` (the management tag lets a leased user log in there). */
export const rabbitAs = async (user: string, password: string, path: string) => {
  const url = rabbitUrl();
  return fetch(`http://${url.host}/api/${path}`, {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
  });
};

export const canLoginToRabbit = async (user: string, password: string) =>
  (await rabbitAs(user, password, "whoami")).status === 200;

const rabbitAdmin = () => {
  const url = rabbitUrl();
  return [decodeURIComponent(url.username), decodeURIComponent(url.password)] as const;
};

export const rabbitUserExists = async (user: string) =>
  (await rabbitAs(...rabbitAdmin(), `users/${encodeURIComponent(user)}`)).status === 200;

export const rabbitPermissions = async (user: string) =>
  (await (await rabbitAs(...rabbitAdmin(), `users/${encodeURIComponent(user)}/permissions`)).json()) as {
    vhost: string;
    read: string;
    write: string;
    configure: string;
  }[];

export const ldapUrl = () => required("KEYWARD_TEST_LDAP_URL");
const LEASES_OU = "ou=leases,dc=keyward,dc=test";

export const ldapInputs = (overrides: Record<string, unknown> = {}) => ({
  url: ldapUrl(),
  binddn: required("KEYWARD_TEST_LDAP_ADMIN_DN"),
  bindpass: required("KEYWARD_TEST_LDAP_ADMIN_PASSWORD"),
  creationLdif: `dn: cn={{Username}},${LEASES_OU}
objectClass: inetOrgPerson
cn: {{Username}}
sn: lease
userPassword: {{Password}}
`,
  revocationLdif: `dn: cn={{Username}},${LEASES_OU}
changetype: delete
`,
  ...overrides,
});

export const ROTATING_DN = `uid=rotating,${LEASES_OU}`;

export const staticLdapInputs = () => ({
  url: ldapUrl(),
  binddn: required("KEYWARD_TEST_LDAP_ADMIN_DN"),
  bindpass: required("KEYWARD_TEST_LDAP_ADMIN_PASSWORD"),
  credentialType: "static" as const,
  rotationLdif: `dn: ${ROTATING_DN}
changetype: modify
replace: userPassword
userPassword: {{Password}}
-
`,
});

export const leaseDn = (username: string) => `cn=${username},${LEASES_OU}`;

export const canBindToLdap = async (dn: string, password: string) => {
  const client = new Client({ url: ldapUrl(), connectTimeout: 5_000 });
  try {
    await client.bind(dn, password);
    return true;
  } catch {
    return false;
  } finally {
    await client.unbind().catch(() => undefined);
  }
};

export const ldapEntryExists = async (dn: string) => {
  const client = new Client({ url: ldapUrl(), connectTimeout: 5_000 });
  try {
    await client.bind(required("KEYWARD_TEST_LDAP_ADMIN_DN"), required("KEYWARD_TEST_LDAP_ADMIN_PASSWORD"));
    const { searchEntries } = await client.search(dn, { scope: "base", attributes: ["1.1"] });
    return searchEntries.length === 1;
  } catch (error) {
    if ((error as { name?: string }).name === "NoSuchObjectError") return false;
    throw error;
  } finally {
    await client.unbind().catch(() => undefined);
  }
};

/** A dynamic secret of the given provider in the scope, checked for success. */
export const createProviderSecret = async (
  scope: LeaseScope,
  provider: { type: "sql-database" | "rabbit-mq" | "ldap"; inputs: Record<string, unknown> },
  extra: Record<string, unknown> = {},
) =>
  expectOk(
    await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name: uniqueName(provider.type.replace(/[^a-z]/g, "")),
        provider: provider as never,
        defaultTTL: "1h",
        ...extra,
      },
    }),
  ).dynamicSecret;

/** Names of the credentials carrying `marker` on each target (what a crash must never leave without a lease). */
export const mariadbUsersWithMarker = async (marker: string) =>
  (await mariadbQuery<{ name: string }>("SELECT User AS name FROM mysql.user WHERE INSTR(User, ?) > 0", [marker])).map(
    (r) => String(r.name),
  );

export const rabbitUsersWithMarker = async (marker: string) =>
  ((await (await rabbitAs(...rabbitAdmin(), "users")).json()) as { name: string }[])
    .map((u) => u.name)
    .filter((name) => name.includes(marker));

export const ldapEntriesWithMarker = async (marker: string) => {
  const client = new Client({ url: ldapUrl(), connectTimeout: 5_000 });
  try {
    await client.bind(required("KEYWARD_TEST_LDAP_ADMIN_DN"), required("KEYWARD_TEST_LDAP_ADMIN_PASSWORD"));
    const { searchEntries } = await client.search(LEASES_OU, {
      scope: "one",
      filter: `(cn=*${marker}*)`,
      attributes: ["cn"],
    });
    return searchEntries.map((entry) => String(entry.cn));
  } finally {
    await client.unbind().catch(() => undefined);
  }
};
