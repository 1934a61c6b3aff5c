import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLeaseRevocation } from "../../src/jobs/lease-revocation";
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

/**
 * Real time, with the job at its default interval: a one-minute lease (the shortest allowed)
 * stops logging in at its expiry and is gone within 10 s of it, on PostgreSQL and on Redis (where
 * nothing but the job ends the credential).
 */
describe("lease expiry in real time", () => {
  let stop: () => Promise<void>;
  beforeAll(async () => {
    stop = startLeaseRevocation((await getTestApp()).deps);
  });
  afterAll(async () => {
    await stop();
  });

  it("revokes PostgreSQL and Redis leases within 10 s of expireAt", { timeout: 120_000 }, async () => {
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
    const pgLease = await leaseOf(scope, secret.name, { ttl: "1m" });
    const redisLease = await leaseOf(scope, redisName);
    expect(await canLogin(pgLease.data.DB_USERNAME!, pgLease.data.DB_PASSWORD!)).toBe(true);
    expect(await canLoginToRedis(redisLease.data.DB_USERNAME!, redisLease.data.DB_PASSWORD!)).toBe(true);

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
    expect(await canLogin(pgLease.data.DB_USERNAME!, pgLease.data.DB_PASSWORD!)).toBe(false);
    expect(await canLoginToRedis(redisLease.data.DB_USERNAME!, redisLease.data.DB_PASSWORD!)).toBe(false);
    const gone = await scope.tenant.admin.dynamicSecretLeases.get({
      params: { leaseId: pgLease.lease.id },
      query: scopeOf(scope),
    });
    expect(gone.status).toBe(404);
  });
});
