import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
 * Real time, with the job at its default interval: a one-minute lease (the shortest allowed)
 * stops logging in at its expiry and is gone within 10 s of it, on PostgreSQL, and on Redis,
 * MariaDB, RabbitMQ and LDAP (where nothing but the job ends the credential).
 */
describe("lease expiry in real time", () => {
  let stop: () => Promise<void>;
  beforeAll(async () => {
    stop = startLeaseRevocation((await getTestApp()).deps);
  });
  afterAll(async () => {
    await stop();
  });

  it(
    "revokes PostgreSQL, Redis, MariaDB, RabbitMQ and LDAP leases within 10 s of expireAt",
    { timeout: 120_000 },
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
      // Watched from now on, in parallel with the waits below.
      const othersGone = Promise.all(
        checks.map(async (check) => {
          await waitUntil(`${check.lease.dynamicSecret.name} to be revoked`, check.gone, 90_000, 250);
          return Date.now();
        }),
      );

      const pgExpiry = new Date(pgLease.lease.expireAt).getTime();
      const redisExpiry = new Date(redisLease.lease.expireAt).getTime();
      await waitUntil(
        "the PostgreSQL role to be dropped",
        async () => !(await roleExists(pgLease.data.DB_USERNAME!)),
        90_000,
        250,
      );
      const pgGoneAt = Date.now();
      await waitUntil(
        "the Redis user to be deleted",
        async () => !(await redisUserExists(redisLease.data.DB_USERNAME!)),
        30_000,
        250,
      );
      const redisGoneAt = Date.now();

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
