import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expectOk, uniqueName } from "../helpers/tenant";
import { canLoginToRedis, createScope, redisInputs, redisUrl, redisUserExists, scopeOf } from "./helpers";

/** RFC 6238 reference computation, independent of the server's, for the test vector secret. */
const expectedTotp = (secretBase32: string, atMs: number, digits = 6, period = 30) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bits = [...secretBase32].map((c) => alphabet.indexOf(c).toString(2).padStart(5, "0")).join("");
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / period)));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, "0");
};

describe("redis provider (ACL users on a real redis-server)", () => {
  it("creates an ACL user that logs in, and deletes it on revoke", async () => {
    const scope = await createScope();
    const name = uniqueName("redis");
    const created = expectOk(
      await scope.tenant.admin.dynamicSecrets.create({
        body: { ...scopeOf(scope), name, provider: { type: "redis", inputs: redisInputs() }, defaultTTL: "1h" },
      }),
    ).dynamicSecret;
    expect(created.type).toBe("redis");
    expect(created.inputs).not.toHaveProperty("password");
    expect(JSON.stringify(created)).not.toContain(decodeURIComponent(redisUrl().password));

    const { lease, data } = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...scopeOf(scope), dynamicSecretName: name } }),
    );
    expect(data.DB_USERNAME).toBe(lease.externalEntityId);
    expect(data.DB_PASSWORD).toHaveLength(64);
    expect(await canLoginToRedis(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);

    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    );
    expect(await redisUserExists(data.DB_USERNAME!)).toBe(false);
    expect(await canLoginToRedis(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(false);
    // Revoking again at the provider is harmless: the user is simply not there.
    expect(
      (await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }))
        .status,
    ).toBe(404);
  });

  it("refuses a wrong root password with 400", async () => {
    const scope = await createScope();
    const res = await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name: uniqueName("redis"),
        provider: { type: "redis", inputs: redisInputs({ password: "wrong" }) },
        defaultTTL: "1h",
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: expect.stringContaining("Failed to connect with provider") });
  });
});

describe("totp provider", () => {
  const SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

  it("hands out the current code, hides the seed, and cannot be renewed", async () => {
    const scope = await createScope();
    const name = uniqueName("otp");
    const created = expectOk(
      await scope.tenant.admin.dynamicSecrets.create({
        body: {
          ...scopeOf(scope),
          name,
          provider: { type: "totp", inputs: { configType: "manual", secret: SECRET } },
          defaultTTL: "1h",
        },
      }),
    ).dynamicSecret;
    expect(created.inputs).toEqual({ configType: "manual" });
    const before = Date.now();
    const { lease, data } = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...scopeOf(scope), dynamicSecretName: name } }),
    );
    const after = Date.now();
    expect([expectedTotp(SECRET, before), expectedTotp(SECRET, after)]).toContain(data.TOTP);
    expect(Number(data.TIME_REMAINING)).toBeGreaterThan(0);

    const renew = await scope.tenant.admin.dynamicSecretLeases.renew({
      params: { leaseId: lease.id },
      body: scopeOf(scope),
    });
    expect(renew.status).toBe(400);
    expect(renew.body).toMatchObject({ message: "Lease renewal is not supported for TOTPs" });
    expect(
      (await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }))
        .status,
    ).toBe(200);
  });

  it("reads its parameters from an otpauth URL and validates it", async () => {
    const scope = await createScope();
    const url = `otpauth://totp/Keyward:test?secret=${SECRET}&digits=8&period=60`;
    const name = uniqueName("otp");
    expectOk(
      await scope.tenant.admin.dynamicSecrets.create({
        body: {
          ...scopeOf(scope),
          name,
          provider: { type: "totp", inputs: { configType: "url", url } },
          defaultTTL: "1h",
        },
      }),
    );
    const { data } = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.create({ body: { ...scopeOf(scope), dynamicSecretName: name } }),
    );
    expect(data.TOTP).toMatch(/^\d{8}$/);
    const missing = await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name: uniqueName("otp"),
        provider: { type: "totp", inputs: { configType: "url", url: "otpauth://totp/x?digits=6" } },
        defaultTTL: "1h",
      },
    });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(missing.body)).toContain("OTP URL must contain secret field");
    const notUrl = await scope.tenant.admin.dynamicSecrets.create({
      body: {
        ...scopeOf(scope),
        name: uniqueName("otp"),
        provider: { type: "totp", inputs: { configType: "url", url: "$(id)" } },
        defaultTTL: "1h",
      },
    });
    expect(notUrl.status).toBe(422);
    expect(notUrl.body).toMatchObject({ error: "ValidationFailure" });
  });
});
