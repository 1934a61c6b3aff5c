import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startLeaseRevocation } from "../../src/modules/dynamic-secrets/lease-revocation.job";
import { getTestApp } from "../helpers/app";
import {
  canLogin,
  canLoginToRedis,
  createScope,
  createSqlSecret,
  leaseOf,
  redisInputs,
  redisUserExists,
  roleExists,
  scopeOf,
  waitUntil,
} from "./helpers";
import { expectOk, uniqueName } from "../helpers/tenant";
import {
  canBindToLdap,
  canLoginToMariadb,
  canLoginToRabbit,
  createProviderSecret,
  ldapEntryExists,
  ldapInputs,
  leaseDn,
  mariadbUserExists,
  mysqlInputs,
  rabbitInputs,
  rabbitUserExists,
} from "./provider-targets";

/**
 * The job at its default interval, on the app's clock: a one-minute lease (the shortest allowed)
 * stops logging in at its expiry and is gone within 10 s of it, on PostgreSQL, and on Redis,
 * MariaDB, RabbitMQ and LDAP (where nothing but the job ends the credential). The clock is moved
 * to just before the first expiry instead of waiting the minute out; from there it runs in real time.
 */
describe("lease expiry on the app's clock", () => {
  let stop: () => Promise<void>;
  let clock: { now: () => number };
  beforeAll(async () => {
    const { deps } = await getTestApp();
    clock = deps.clock;
    stop = startLeaseRevocation(deps);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await stop();
  });

  it(
    "revokes PostgreSQL, Redis, MariaDB, RabbitMQ and LDAP leases within 10 s of expireAt",
    { timeout: 90_000 },
    async () => {
      const scope = await createScope();
      const secret = await createSqlSecret(scope);
      const redisName = uniqueName("redis");
      expectOk(
        await scope.tenant.admin.dynamicSecrets.create({
          body: {
            ...scopeOf(scope),
            name: redisName,
            provider: { type: "redis", inputs: redisInputs() },
            defaultTTL: "1m",
          },
        }),
      );
      const others = await Promise.all(
        [
          { type: "sql-database" as const, inputs: mysqlInputs() },
          { type: "rabbit-mq" as const, inputs: rabbitInputs() },
          { type: "ldap" as const, inputs: ldapInputs() },
        ].map(async (provider) => {
          const created = await createProviderSecret(scope, provider, { defaultTTL: "1m" });
          return leaseOf(scope, created.name);
        }),
      );
      const [mariaLease, rabbitLease, ldapLease] = others as [
        (typeof others)[number],
        (typeof others)[number],
        (typeof others)[number],
      ];
      const pgLease = await leaseOf(scope, secret.name, { ttl: "1m" });
      const redisLease = await leaseOf(scope, redisName);
      expect(await canLogin(pgLease.data.DB_USERNAME!, pgLease.data.DB_PASSWORD!)).toBe(true);
      expect(await canLoginToRedis(redisLease.data.DB_USERNAME!, redisLease.data.DB_PASSWORD!)).toBe(true);

      const checks = [
        {
          lease: mariaLease,
          gone: async () => !(await mariadbUserExists(mariaLease.data.DB_USERNAME!)),
          login: () => canLoginToMariadb(mariaLease.data.DB_USERNAME!, mariaLease.data.DB_PASSWORD!),
        },
        {
          lease: rabbitLease,
          gone: async () => !(await rabbitUserExists(rabbitLease.data.DB_USERNAME!)),
          login: () => canLoginToRabbit(rabbitLease.data.DB_USERNAME!, rabbitLease.data.DB_PASSWORD!),
        },
        {
          lease: ldapLease,
          gone: async () => !(await ldapEntryExists(leaseDn(ldapLease.data.USERNAME!))),
          login: () => canBindToLdap(leaseDn(ldapLease.data.USERNAME!), ldapLease.data.PASSWORD!),
        },
      ];
      for (const check of checks) expect(await check.login()).toBe(true);
      const pgExpiry = new Date(pgLease.lease.expireAt).getTime();
      const redisExpiry = new Date(redisLease.lease.expireAt).getTime();
      const firstExpiry = Math.min(
        pgExpiry,
        redisExpiry,
        ...checks.map((check) => new Date(check.lease.lease.expireAt).getTime()),
      );
      const realNow = clock.now.bind(clock);
      const skip = firstExpiry - 1_000 - realNow();
      expect(skip).toBeGreaterThan(30_000);
      vi.spyOn(clock, "now").mockImplementation(() => realNow() + skip);
      // Nothing is revoked before its expiry: the credentials still work just before the first one.
      expect(await canLogin(pgLease.data.DB_USERNAME!, pgLease.data.DB_PASSWORD!)).toBe(true);
      for (const check of checks) expect(await check.login()).toBe(true);

      // Watched from now on, in parallel with the waits below.
      const othersGone = Promise.all(
        checks.map(async (check) => {
          await waitUntil(`${check.lease.dynamicSecret.name} to be revoked`, check.gone, 30_000, 250);
          return clock.now();
        }),
      );
      await waitUntil(
        "the PostgreSQL role to be dropped",
        async () => !(await roleExists(pgLease.data.DB_USERNAME!)),
        30_000,
        250,
      );
      const pgGoneAt = clock.now();
      await waitUntil(
        "the Redis user to be deleted",
        async () => !(await redisUserExists(redisLease.data.DB_USERNAME!)),
        30_000,
        250,
      );
      const redisGoneAt = clock.now();

      expect(pgGoneAt).toBeGreaterThanOrEqual(pgExpiry);
      expect(pgGoneAt - pgExpiry).toBeLessThan(10_000);
      expect(redisGoneAt - redisExpiry).toBeLessThan(10_000);
      const othersGoneAt = await othersGone;
      for (const [index, check] of checks.entries()) {
        const expiry = new Date(check.lease.lease.expireAt).getTime();
        expect(othersGoneAt[index]!).toBeGreaterThanOrEqual(expiry);
        expect(othersGoneAt[index]! - expiry).toBeLessThan(10_000);
        expect(await check.login()).toBe(false);
      }
      expect(await canLogin(pgLease.data.DB_USERNAME!, pgLease.data.DB_PASSWORD!)).toBe(false);
      expect(await canLoginToRedis(redisLease.data.DB_USERNAME!, redisLease.data.DB_PASSWORD!)).toBe(false);
      const gone = await scope.tenant.admin.dynamicSecretLeases.get({
        params: { leaseId: pgLease.lease.id },
        query: scopeOf(scope),
      });
      expect(gone.status).toBe(404);
    },
  );
});
