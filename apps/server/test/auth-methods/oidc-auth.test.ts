import { SignJWT, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import {
  AUDIENCE,
  MISSING_UUID,
  createBareIdentity,
  createProjectOwnedIdentity,
  createUnprivileged,
  issuer,
  providerToken,
} from "./helpers";

const attachOidc = async (tenant: Tenant, body: Record<string, unknown> = {}, orgRole = "no-access") => {
  const identity = await createBareIdentity(tenant, orgRole);
  const { identityOidcAuth } = expectOk(
    await tenant.admin.oidcAuth.attach({
      params: { identityId: identity.id },
      body: { oidcDiscoveryUrl: issuer(), boundIssuer: issuer(), boundAudiences: AUDIENCE, boundClaims: {}, ...body },
    }),
  );
  return { identity, oidc: identityOidcAuth };
};

const login = (tenant: Tenant, identityId: string, jwt: string) =>
  tenant.anonymous.oidcAuth.login({ body: { identityId, jwt } });

describe("OIDC auth configuration", () => {
  it("attaches, reads (with caCert), updates and deletes (without caCert)", async () => {
    const tenant = await createTenant();
    const { identity, oidc } = await attachOidc(tenant, {
      boundClaims: { team: "platform,qa" },
      claimMetadataMapping: { team: "team" },
      boundSubject: "deploy-*",
      caCert: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    });
    expect(oidc).toMatchObject({
      identityId: identity.id,
      oidcDiscoveryUrl: issuer(),
      boundIssuer: issuer(),
      boundAudiences: AUDIENCE,
      boundClaims: { team: "platform, qa" },
      claimMetadataMapping: { team: "team" },
      boundSubject: "deploy-*",
      caCert: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    });
    const stored = await tenant.app.deps.db
      .selectFrom("identity_oidc_auths")
      .select("encrypted_ca_cert")
      .where("auth_config_id", "=", oidc.id)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_ca_cert).toMatch(/^v2:\d+:/);

    const got = expectOk(await tenant.admin.oidcAuth.get({ params: { identityId: identity.id } })).identityOidcAuth;
    expect(got).toEqual(oidc);
    const updated = expectOk(
      await tenant.admin.oidcAuth.update({
        params: { identityId: identity.id },
        body: { boundAudiences: "a, b ,c", caCert: "", accessTokenTTL: 60 },
      }),
    ).identityOidcAuth;
    expect(updated).toMatchObject({
      boundAudiences: "a, b, c",
      caCert: "",
      accessTokenTTL: 60,
      boundSubject: "deploy-*",
    });
    const deleted = expectOk(
      await tenant.admin.oidcAuth.revoke({ params: { identityId: identity.id } }),
    ).identityOidcAuth;
    expect(deleted.id).toBe(oidc.id);
    expect(deleted).not.toHaveProperty("caCert");
  });

  it("answers the reference's errors and refuses unsafe discovery URLs", async () => {
    const tenant = await createTenant();
    const { identity } = await attachOidc(tenant);
    const bare = await createBareIdentity(tenant);
    const body = { oidcDiscoveryUrl: issuer(), boundIssuer: issuer(), boundClaims: {} };
    expect(await tenant.admin.oidcAuth.attach({ params: { identityId: identity.id }, body })).toMatchObject({
      status: 400,
      body: { message: "Failed to add OIDC Auth to already configured identity" },
    });
    expect(await tenant.admin.oidcAuth.get({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have OIDC Auth attached" },
    });
    expect(await tenant.admin.oidcAuth.update({ params: { identityId: bare.id }, body: {} })).toMatchObject({
      status: 400,
      body: { message: "Failed to update OIDC Auth" },
    });
    expect(await tenant.admin.oidcAuth.revoke({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have OIDC auth" },
    });
    for (const url of ["http://169.254.169.254/latest", "http://10.0.0.1", "ftp://127.0.0.1"]) {
      const res = await tenant.admin.oidcAuth.attach({
        params: { identityId: bare.id },
        body: { ...body, oidcDiscoveryUrl: url },
      });
      expect(res.status).toBe(400);
    }
    expect(
      (
        await tenant.admin.oidcAuth.attach({
          params: { identityId: bare.id },
          body: { ...body, oidcDiscoveryUrl: "not a url" },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await tenant.admin.oidcAuth.attach({
          params: { identityId: bare.id },
          body: { ...body, boundSubject: "+(a|b)" },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await tenant.admin.oidcAuth.attach({
          params: { identityId: bare.id },
          body: { ...body, accessTokenTTL: 10, accessTokenMaxTTL: 5 },
        })
      ).status,
    ).toBe(422);
    expect((await tenant.admin.oidcAuth.get({ params: { identityId: MISSING_UUID } })).status).toBe(404);
    expect((await tenant.admin.oidcAuth.get({ params: { identityId: "x" } })).status).toBe(404);
    expect((await tenant.anonymous.oidcAuth.get({ params: { identityId: identity.id } })).status).toBe(401);
  });

  it("refuses callers without permission (403)", async () => {
    const tenant = await createTenant();
    const { identity } = await attachOidc(tenant);
    const outsider = await createUnprivileged(tenant);
    expect(await outsider.client.oidcAuth.get({ params: { identityId: identity.id } })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to read on identity" },
    });
    expect((await outsider.client.oidcAuth.revoke({ params: { identityId: identity.id } })).status).toBe(403);
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    const member = await createUnprivileged(tenant, project.id);
    const denied = await member.client.oidcAuth.attach({
      params: { identityId: owned.id },
      body: { oidcDiscoveryUrl: issuer(), boundIssuer: issuer(), boundClaims: {} },
    });
    expect(denied).toMatchObject({ status: 403, body: { message: "You are not allowed to create on identity" } });
  });
});

describe("OIDC login against a real provider", () => {
  it("verifies the provider's JWT, enforces the bindings and records mapped claims", async () => {
    const tenant = await createTenant();
    const { identity } = await attachOidc(
      tenant,
      {
        boundSubject: "deploy-*",
        boundClaims: { team: "platform", groups: "admins", "env.name": "prod, staging" },
        claimMetadataMapping: { team: "team", environment: "env.name" },
        accessTokenTTL: 900,
      },
      "member",
    );
    const res = expectOk(await login(tenant, identity.id, await providerToken("deploy-bot")));
    expect(res).toMatchObject({ expiresIn: 900, tokenType: "Bearer" });
    expect(
      (await tenant.app.client(res.accessToken).identities.get({ params: { identityId: identity.id } })).status,
    ).toBe(200);
    const claims = await tenant.app.deps.db
      .selectFrom("identity_access_token_claims as c")
      .innerJoin("identity_access_tokens as t", "t.id", "c.token_id")
      .select(["c.claims", "c.auth_method"])
      .where("t.identity_id", "=", identity.id)
      .executeTakeFirstOrThrow();
    expect(claims).toEqual({ auth_method: "oidc-auth", claims: { team: "platform", environment: "prod" } });
  });

  it("rejects tokens that break a binding", async () => {
    const tenant = await createTenant();
    const { identity } = await attachOidc(tenant, { boundSubject: "deploy-*", boundClaims: { team: "platform" } });
    const other = await providerToken("build-bot");
    expect(await login(tenant, identity.id, other)).toMatchObject({
      status: 403,
      body: { message: "Access denied: OIDC subject not allowed." },
    });
    const wrongAudience = await providerToken("deploy-bot", "https://elsewhere.test");
    expect(await login(tenant, identity.id, wrongAudience)).toMatchObject({
      status: 401,
      body: { message: "Access denied: OIDC audience not allowed." },
    });

    expectOk(
      await tenant.admin.oidcAuth.update({
        params: { identityId: identity.id },
        body: { boundSubject: "", boundClaims: { team: "qa" } },
      }),
    );
    expect(await login(tenant, identity.id, await providerToken("deploy-bot"))).toMatchObject({
      status: 401,
      body: { message: "Access denied: OIDC claim not allowed." },
    });
    expectOk(
      await tenant.admin.oidcAuth.update({
        params: { identityId: identity.id },
        body: { boundClaims: { missing: "x" } },
      }),
    );
    expect(await login(tenant, identity.id, await providerToken("deploy-bot"))).toMatchObject({
      status: 401,
      body: { message: "Access denied: token has no missing field" },
    });
    expectOk(
      await tenant.admin.oidcAuth.update({
        params: { identityId: identity.id },
        body: { boundClaims: {}, boundIssuer: "https://other-issuer.test" },
      }),
    );
    expect(await login(tenant, identity.id, await providerToken("deploy-bot"))).toMatchObject({
      status: 401,
      body: { message: "Access denied: jwt issuer invalid. expected: https://other-issuer.test" },
    });
  });

  it("rejects forged and malformed tokens and unknown identities", async () => {
    const tenant = await createTenant();
    const { identity } = await attachOidc(tenant);
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({ sub: "deploy-bot", aud: AUDIENCE })
      .setProtectedHeader({ alg: "RS256", kid: "keyward-test-key" })
      .setIssuer(issuer())
      .setExpirationTime("5m")
      .sign(privateKey);
    expect(await login(tenant, identity.id, forged)).toMatchObject({
      status: 401,
      body: { message: "Access denied: invalid signature" },
    });
    const unknownKid = await new SignJWT({ sub: "x" })
      .setProtectedHeader({ alg: "RS256", kid: "other" })
      .setIssuer(issuer())
      .sign(privateKey);
    expect(await login(tenant, identity.id, unknownKid)).toMatchObject({ status: 401 });
    expect(await login(tenant, identity.id, "not-a-jwt")).toMatchObject({
      status: 401,
      body: { message: "Invalid JWT" },
    });
    expect(await login(tenant, MISSING_UUID, forged)).toMatchObject({
      status: 404,
      body: { message: "OIDC auth method not found for identity, did you configure OIDC auth?" },
    });
    expect((await tenant.anonymous.oidcAuth.login({ body: { identityId: identity.id } } as never)).status).toBe(422);
  });

  it("fails closed when the provider cannot be reached, and deleting the method ends its tokens", async () => {
    const tenant = await createTenant();
    const { identity } = await attachOidc(tenant);
    const { accessToken } = expectOk(await login(tenant, identity.id, await providerToken("deploy-bot")));
    expectOk(
      await tenant.admin.oidcAuth.update({
        params: { identityId: identity.id },
        body: { oidcDiscoveryUrl: "http://127.0.0.1:9" },
      }),
    );
    const unreachable = await login(tenant, identity.id, await providerToken("deploy-bot"));
    expect(unreachable.status).toBe(401);
    expect((unreachable.body as { message: string }).message).toMatch(
      /^Access denied: Failed to fetch OIDC discovery document/,
    );
    expectOk(await tenant.admin.oidcAuth.revoke({ params: { identityId: identity.id } }));
    expect((await tenant.app.client(accessToken).identities.get({ params: { identityId: identity.id } })).status).toBe(
      401,
    );
  });
});
