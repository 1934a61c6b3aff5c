import { Redis } from "ioredis";
import pg from "pg";
import type { PermissionRule } from "../../src/permissions";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

/** The PostgreSQL target the global setup started (a superuser URL). */
export const targetUrl = () => {
  const url = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!url)
    throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup did not start the PostgreSQL target");
  return new URL(url);
};

export const redisUrl = () => {
  const url = process.env.KEYWARD_TEST_REDIS_URL;
  if (!url) throw new Error("KEYWARD_TEST_REDIS_URL is not set: the global setup did not start redis-server");
  return new URL(url);
};

/** Provider inputs for the PostgreSQL target, as the superuser unless overridden. */
export const sqlInputs = (overrides: Record<string, unknown> = {}) => {
  const url = targetUrl();
  return {
    client: "postgres" as const,
    host: url.hostname,
    port: Number(url.port),
    database: "postgres",
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ...overrides,
  };
};

export const redisInputs = (overrides: Record<string, unknown> = {}) => {
  const url = redisUrl();
  return {
    host: url.hostname,
    port: Number(url.port),
    username: "default",
    password: decodeURIComponent(url.password),
    ...overrides,
  };
};

/** One statement on the target as its superuser. */
export const targetQuery = async <R extends Record<string, unknown>>(text: string, params: unknown[] = []) => {
  const client = new pg.Client({ connectionString: targetUrl().toString() });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
};

export const roleExists = async (name: string) =>
  (await targetQuery("select 1 from pg_roles where rolname = $1", [name])).length > 0;

/** Whether a username and password log in to the target right now. */
export const canLogin = async (user: string, password: string) => {
  const url = targetUrl();
  const client = new pg.Client({
    host: url.hostname,
    port: Number(url.port),
    database: "postgres",
    user,
    password,
    connectionTimeoutMillis: 5_000,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** A session opened with leased credentials, to see it ended by revocation. */
export const openSession = async (user: string, password: string) => {
  const url = targetUrl();
  const client = new pg.Client({ host: url.hostname, port: Number(url.port), database: "postgres", user, password });
  client.on("error", () => undefined);
  await client.connect();
  return client;
};

export const canLoginToRedis = async (username: string, password: string) => {
  const url = redisUrl();
  const client = new Redis({
    host: url.hostname,
    port: Number(url.port),
    username,
    password,
    lazyConnect: true,
    enableReadyCheck: false,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
};

export const redisUserExists = async (username: string) => {
  const url = redisUrl();
  const client = new Redis({
    host: url.hostname,
    port: Number(url.port),
    password: decodeURIComponent(url.password),
    lazyConnect: true,
  });
  try {
    await client.connect();
    return (await client.call("ACL", "GETUSER", username)) !== null;
  } finally {
    client.disconnect();
  }
};

export const waitUntil = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000, everyMs = 100) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
};

export type LeaseScope = {
  tenant: Tenant;
  projectId: string;
  projectSlug: string;
  environmentSlug: string;
  path: string;
};

/** A fresh tenant and secret-manager project; dynamic secrets go in `dev` at "/". */
export const createScope = async (): Promise<LeaseScope> => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  return { tenant, projectId: project.id, projectSlug: project.slug, environmentSlug: "dev", path: "/" };
};

export const scopeOf = (scope: LeaseScope) => ({
  projectSlug: scope.projectSlug,
  environmentSlug: scope.environmentSlug,
  path: scope.path,
});

export const createSqlSecret = async (
  scope: LeaseScope,
  overrides: Record<string, unknown> = {},
  inputs: Record<string, unknown> = {},
) =>
  expectOk(
    await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name: uniqueName("pg"),
        provider: { type: "sql-database", inputs: sqlInputs(inputs) },
        defaultTTL: "1h",
        maxTTL: "1d",
        ...overrides,
      },
    }),
  ).dynamicSecret;

export const leaseOf = async (scope: LeaseScope, dynamicSecretName: string, extra: { ttl?: string } = {}) =>
  expectOk(
    await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...scopeOf(scope), dynamicSecretName, ...extra } }),
  );

/** An identity of the tenant with a custom project role holding exactly these rules. */
export const identityWithRules = async (scope: LeaseScope, rules: PermissionRule[]) => {
  const slug = uniqueName("role");
  await scope.tenant.app.deps.db
    .insertInto("project_roles")
    .values({ project_id: scope.projectId, name: slug, slug, permissions: JSON.stringify(rules) })
    .execute();
  return createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: slug });
};

/** A throwaway role on the target that may create roles: a root credential the tests can break and mend. */
export const createRootRole = async () => {
  const name = `root_${Math.random().toString(36).slice(2, 10)}`;
  const password = `pw_${Math.random().toString(36).slice(2)}`;
  await targetQuery(`create role "${name}" with login createrole password '${password}'`);
  return { name, password };
};

/** The target stops accepting the root credential: new password, and its open sessions are ended. */
export const breakRootRole = async (name: string) => {
  await targetQuery(`alter role "${name}" password 'changed-elsewhere'`);
  await targetQuery("select pg_terminate_backend(pid) from pg_stat_activity where usename = $1", [name]);
};

export const mendRootRole = (name: string, password: string) =>
  targetQuery(`alter role "${name}" password '${password}'`);
