import { InfisicalSDK } from "@infisical/sdk";
import { describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { MISSING_UUID, createBareIdentity, createProjectOwnedIdentity, createUnprivileged } from "./helpers";

const attachUa = async (tenant: Tenant, body: Record<string, unknown> = {}, orgRole = "no-access") => {
  const identity = await createBareIdentity(tenant, orgRole);
  const { identityUniversalAuth } = expectOk(
    await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body }),
  );
  return { identity, ua: identityUniversalAuth };
};

const newSecret = async (
  tenant: Tenant,
  identityId: string,
  body: { numUsesLimit?: number; ttl?: number; description?: string } = {},
) => expectOk(await tenant.admin.universalAuth.createClientSecret({ params: { identityId }, body }));

describe("universal auth configuration", () => {
  it("attaches with defaults, reads, updates and revokes, keeping authMethods in sync", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant);
    expect(ua).toMatchObject({
      identityId: identity.id,
      accessTokenTTL: 2_592_000,
      accessTokenMaxTTL: 2_592_000,
      accessTokenNumUsesLimit: 0,
      accessTokenPeriod: 0,
      clientSecretTrustedIps: [
        { ipAddress: "0.0.0.0", type: "ipv4", prefix: 0 },
        { ipAddress: "::", type: "ipv6", prefix: 0 },
      ],
      lockoutEnabled: true,
      lockoutThreshold: 3,
      lockoutDurationSeconds: 300,
      lockoutCounterResetSeconds: 30,
    });
    expect(ua.clientId).toMatch(/^[0-9a-f-]{36}$/);
    const listed = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(listed.identity.authMethods).toEqual(["universal-auth"]);

    const got = expectOk(await tenant.admin.universalAuth.get({ params: { identityId: identity.id } }));
    expect(got.identityUniversalAuth).toEqual(ua);

    const updated = expectOk(
      await tenant.admin.universalAuth.update({
        params: { identityId: identity.id },
        body: { accessTokenTTL: 60, clientSecretTrustedIps: [{ ipAddress: "10.0.0.0/8" }], lockoutThreshold: 5 },
      }),
    );
    expect(updated.identityUniversalAuth).toMatchObject({
      accessTokenTTL: 60,
      clientSecretTrustedIps: [{ ipAddress: "10.0.0.0", type: "ipv4", prefix: 8 }],
      lockoutThreshold: 5,
      clientId: ua.clientId,
    });

    const deleted = expectOk(await tenant.admin.universalAuth.revoke({ params: { identityId: identity.id } }));
    expect(deleted.identityUniversalAuth.id).toBe(ua.id);
    const after = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(after.identity.authMethods).toEqual([]);
  });

  it("answers the reference's errors", async () => {
    const tenant = await createTenant();
    const { identity } = await attachUa(tenant);
    const bare = await createBareIdentity(tenant);
    const other = await createTenant();
    const foreign = await createBareIdentity(other);

    const dup = await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} });
    expect(dup).toMatchObject({
      status: 400,
      body: { message: "Failed to add universal auth to already configured identity" },
    });
    const ttl = await tenant.admin.universalAuth.attach({
      params: { identityId: bare.id },
      body: { accessTokenTTL: 100, accessTokenMaxTTL: 10 },
    });
    expect(ttl.status).toBe(422);
    const badIp = await tenant.admin.universalAuth.attach({
      params: { identityId: bare.id },
      body: { clientSecretTrustedIps: [{ ipAddress: "nope" }] },
    });
    expect(badIp).toMatchObject({ status: 400, body: { message: "The IP is not a valid IPv4, IPv6, or CIDR block" } });
    const lockout = await tenant.admin.universalAuth.attach({
      params: { identityId: bare.id },
      body: { lockoutThreshold: 31 },
    });
    expect(lockout.status).toBe(422);

    for (const identityId of [MISSING_UUID, "not-a-uuid", foreign.id]) {
      const res = await tenant.admin.universalAuth.get({ params: { identityId } });
      expect(res).toMatchObject({ status: 404, body: { message: `Failed to find identity with ID ${identityId}` } });
    }
    expect(await tenant.admin.universalAuth.get({ params: { identityId: bare.id } })).toMatchObject({
      status: 404,
      body: { message: `Failed to find universal auth for identity with ID ${bare.id}` },
    });
    expect(await tenant.admin.universalAuth.update({ params: { identityId: bare.id }, body: {} })).toMatchObject({
      status: 404,
    });
    expect(await tenant.admin.universalAuth.revoke({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have universal auth" },
    });
    expect(
      await tenant.admin.universalAuth.createClientSecret({ params: { identityId: bare.id }, body: {} }),
    ).toMatchObject({ status: 400 });
    expect((await tenant.anonymous.universalAuth.get({ params: { identityId: identity.id } })).status).toBe(401);
  });

  it("refuses callers without permission (403), for org and project identities", async () => {
    const tenant = await createTenant();
    const { identity } = await attachUa(tenant);
    const outsider = await createUnprivileged(tenant);
    for (const res of [
      await outsider.client.universalAuth.get({ params: { identityId: identity.id } }),
      await outsider.client.universalAuth.update({ params: { identityId: identity.id }, body: {} }),
      await outsider.client.universalAuth.revoke({ params: { identityId: identity.id } }),
      await outsider.client.universalAuth.listClientSecrets({ params: { identityId: identity.id } }),
      await outsider.client.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
      await outsider.client.universalAuth.attach({
        params: { identityId: (await createBareIdentity(tenant)).id },
        body: {},
      }),
    ]) {
      expect(res).toMatchObject({ status: 403, body: { error: "PermissionDenied" } });
    }
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    expectOk(await tenant.admin.universalAuth.attach({ params: { identityId: owned.id }, body: {} }));
    const member = await createUnprivileged(tenant, project.id);
    const denied = await member.client.universalAuth.get({ params: { identityId: owned.id } });
    expect(denied).toMatchObject({ status: 403, body: { message: "You are not allowed to read on identity" } });
    const revokeDenied = await member.client.universalAuth.revoke({ params: { identityId: owned.id } });
    expect(revokeDenied).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to revoke-auth on identity" },
    });
    // An org member may read but not revoke an admin identity's auth (role boundary).
    const admin = await createBareIdentity(tenant, "admin");
    expectOk(await tenant.admin.universalAuth.attach({ params: { identityId: admin.id }, body: {} }));
    const member2 = await createUnprivileged(tenant);
    expect((await member2.client.universalAuth.get({ params: { identityId: admin.id } })).status).toBe(403);
  });
});

describe("universal auth client secrets and login", () => {
  it("creates a secret shown once, lists, gets and revokes it; logs in with it", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant, { accessTokenTTL: 120, accessTokenMaxTTL: 600 }, "member");
    const created = await newSecret(tenant, identity.id, { description: "ci" });
    expect(created.clientSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(created.clientSecretData).toMatchObject({
      identityUAId: ua.id,
      description: "ci",
      clientSecretPrefix: created.clientSecret.slice(0, 4),
      clientSecretNumUses: 0,
      clientSecretNumUsesLimit: 0,
      clientSecretTTL: 0,
      isClientSecretRevoked: false,
    });
    const list = expectOk(await tenant.admin.universalAuth.listClientSecrets({ params: { identityId: identity.id } }));
    expect(list.clientSecretData.map((s) => s.id)).toEqual([created.clientSecretData.id]);
    expect(JSON.stringify(list)).not.toContain(created.clientSecret);
    const one = expectOk(
      await tenant.admin.universalAuth.getClientSecret({
        params: { identityId: identity.id, clientSecretId: created.clientSecretData.id },
      }),
    );
    expect(one.clientSecretData.id).toBe(created.clientSecretData.id);

    const login = expectOk(
      await tenant.anonymous.universalAuth.login({
        body: { clientId: ua.clientId, clientSecret: created.clientSecret },
      }),
    );
    expect(login).toMatchObject({ expiresIn: 120, accessTokenMaxTTL: 600, tokenType: "Bearer" });
    const me = await tenant.app.client(login.accessToken).identities.get({ params: { identityId: identity.id } });
    expect(me.status).toBe(200);

    const revoked = expectOk(
      await tenant.admin.universalAuth.revokeClientSecret({
        params: { identityId: identity.id, clientSecretId: created.clientSecretData.id },
      }),
    );
    expect(revoked.clientSecretData.isClientSecretRevoked).toBe(true);
    const again = await tenant.anonymous.universalAuth.login({
      body: { clientId: ua.clientId, clientSecret: created.clientSecret },
    });
    expect(again).toMatchObject({ status: 401, body: { message: "Invalid credentials" } });
    for (const clientSecretId of [MISSING_UUID, "x"]) {
      const missing = await tenant.admin.universalAuth.getClientSecret({
        params: { identityId: identity.id, clientSecretId },
      });
      expect(missing.status).toBe(404);
    }
    expect(
      (await tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: { ttl: -1 } }))
        .status,
    ).toBe(422);
  });

  it("rejects bad credentials, expired secrets and untrusted client addresses", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant, { lockoutEnabled: false });
    const { clientSecret } = await newSecret(tenant, identity.id);
    expect(await tenant.anonymous.universalAuth.login({ body: { clientId: "nope", clientSecret } })).toMatchObject({
      status: 401,
    });
    expect(
      await tenant.anonymous.universalAuth.login({ body: { clientId: MISSING_UUID, clientSecret } }),
    ).toMatchObject({ status: 401 });
    expect(
      await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret: "wrong" } }),
    ).toMatchObject({
      status: 401,
      body: { message: "Invalid credentials" },
    });
    expect((await tenant.anonymous.universalAuth.login({ body: { clientSecret } } as never)).status).toBe(422);

    const expiring = await newSecret(tenant, identity.id, { ttl: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(
      await tenant.anonymous.universalAuth.login({
        body: { clientId: ua.clientId, clientSecret: expiring.clientSecret },
      }),
    ).toMatchObject({
      status: 401,
      body: { message: "Access denied due to expired client secret" },
    });

    expectOk(
      await tenant.admin.universalAuth.update({
        params: { identityId: identity.id },
        body: { clientSecretTrustedIps: [{ ipAddress: "10.9.9.9" }] },
      }),
    );
    expect(await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret } })).toMatchObject(
      {
        status: 403,
        body: { message: "You are not allowed to access this resource from the current IP address" },
      },
    );
  });

  it("applies the access-token trusted IPs to issued tokens, at once on update", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant);
    const { clientSecret } = await newSecret(tenant, identity.id);
    const { accessToken } = expectOk(
      await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret } }),
    );
    const client = tenant.app.client(accessToken);
    expect((await client.identities.get({ params: { identityId: identity.id } })).status).toBe(403);
    expectOk(
      await tenant.admin.universalAuth.update({
        params: { identityId: identity.id },
        body: { accessTokenTrustedIps: [{ ipAddress: "10.1.1.1" }] },
      }),
    );
    const blocked = await client.identities.get({ params: { identityId: identity.id } });
    expect(blocked).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to access this resource from the current IP address" },
    });
  });

  it("spends a secret's use limit exactly once per login under parallel logins", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant, { lockoutEnabled: false });
    const { clientSecret, clientSecretData } = await newSecret(tenant, identity.id, { numUsesLimit: 3 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 401)).toHaveLength(17);
    const tokens = await tenant.app.deps.db
      .selectFrom("identity_access_tokens")
      .select("id")
      .where("client_secret_id", "=", clientSecretData.id)
      .execute();
    expect(tokens).toHaveLength(3);
  });

  it("locks a client out after the failure threshold, and clear-lockouts lifts it", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant, { lockoutThreshold: 2 });
    const { clientSecret } = await newSecret(tenant, identity.id);
    for (let i = 0; i < 2; i++) {
      expect(
        (await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret: "bad" } })).status,
      ).toBe(401);
    }
    const locked = await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret } });
    expect(locked).toMatchObject({
      status: 401,
      body: { message: "This identity auth method is temporarily locked, please try again later" },
    });
    const details = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(details.identity.activeLockoutAuthMethods).toEqual(["universal-auth"]);
    expect(expectOk(await tenant.admin.universalAuth.clearLockouts({ params: { identityId: identity.id } }))).toEqual({
      deleted: 1,
    });
    expect((await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret } })).status).toBe(
      200,
    );
  });

  it("deleting the method ends the tokens it issued at once", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant);
    const { clientSecret } = await newSecret(tenant, identity.id);
    const { accessToken } = expectOk(
      await tenant.anonymous.universalAuth.login({ body: { clientId: ua.clientId, clientSecret } }),
    );
    expectOk(await tenant.admin.universalAuth.revoke({ params: { identityId: identity.id } }));
    const res = await tenant.app.client(accessToken).identities.get({ params: { identityId: identity.id } });
    expect(res).toMatchObject({ status: 401, body: { message: "No identity access token found" } });
  });

  it("lets @infisical/sdk v5 log in with universal auth", async () => {
    const tenant = await createTenant();
    const { identity, ua } = await attachUa(tenant, {}, "member");
    const { clientSecret } = await newSecret(tenant, identity.id);
    const sdk = new InfisicalSDK({ siteUrl: tenant.app.baseUrl });
    await sdk.auth().universalAuth.login({ clientId: ua.clientId, clientSecret });
    const token = sdk.auth().getAccessToken();
    expect(token).toBeTruthy();
    const res = await tenant.app.client(token ?? undefined).identities.get({ params: { identityId: identity.id } });
    expect(res.status).toBe(200);
    const row = await tenant.app.deps.db
      .selectFrom("identity_access_tokens")
      .select("auth_method")
      .where("identity_id", "=", identity.id)
      .executeTakeFirst();
    expect(row?.auth_method).toBe("universal-auth");
  });
});
