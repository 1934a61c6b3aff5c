import { createHmac } from "node:crypto";
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createTestCa, startKeyServer, type Peer, type TestCa } from "../services/workload-peers";
import {
  MISSING_UUID,
  createBareIdentity,
  createProjectOwnedIdentity,
  createUnprivileged,
  claimTemplateProbe,
} from "./helpers";

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
const ISSUER = "https://ci.keyward.test";

let ca: TestCa;
let jwks: Peer;
let first: KeyPair;
let second: KeyPair;
let served: JWK[] = [];

beforeAll(async () => {
  ca = await createTestCa();
  first = await generateKeyPair("RS256", { extractable: true });
  second = await generateKeyPair("ES256", { extractable: true });
  served = [{ ...(await exportJWK(first.publicKey)), kid: "k1", alg: "RS256", use: "sig" }];
  jwks = await startKeyServer(ca, () => ({ keys: served }));
});
afterAll(() => jwks.close());

const sign = (
  key: KeyPair,
  claims: Record<string, unknown> = {},
  options: { kid?: string; alg?: string; exp?: string | number } = {},
) =>
  new SignJWT({ sub: "deploy-api", aud: "keyward", team: "platform", ci: { repo: "org/api" }, ...claims })
    .setProtectedHeader({ alg: options.alg ?? "RS256", ...(options.kid ? { kid: options.kid } : {}) })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? "5m")
    .sign(key.privateKey);

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

const attachStatic = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const { identityJwtAuth } = expectOk(
    await tenant.admin.jwtAuth.attach({
      params: { identityId: identity.id },
      body: {
        configurationType: "static",
        publicKeys: [await exportSPKI(first.publicKey)],
        boundIssuer: ISSUER,
        boundClaims: {},
        ...body,
      },
    }),
  );
  return { identity, jwt: identityJwtAuth };
};

const login = (tenant: Tenant, identityId: string, jwt: string) =>
  tenant.anonymous.jwtAuth.login({ body: { identityId, jwt } });

describe("JWT auth configuration", () => {
  it("attaches, reads, updates and deletes; keys sealed at rest and left out of the delete answer", async () => {
    const tenant = await createTenant();
    const pem = await exportSPKI(first.publicKey);
    const { identity, jwt } = await attachStatic(tenant, {
      boundAudiences: "keyward ,other",
      boundClaims: { team: "platform,qa" },
      boundSubject: "deploy-*",
      accessTokenTTL: 600,
    });
    expect(jwt).toMatchObject({
      identityId: identity.id,
      configurationType: "static",
      jwksUrl: "",
      jwksCaCert: "",
      publicKeys: [pem],
      boundIssuer: ISSUER,
      boundAudiences: "keyward, other",
      boundClaims: { team: "platform, qa" },
      boundSubject: "deploy-*",
      accessTokenTTL: 600,
      accessTokenMaxTTL: 2_592_000,
      accessTokenTrustedIps: [
        { ipAddress: "0.0.0.0", prefix: 0, type: "ipv4" },
        { ipAddress: "::", prefix: 0, type: "ipv6" },
      ],
    });
    const stored = await tenant.app.deps.db
      .selectFrom("identity_jwt_auths")
      .select("encrypted_public_keys")
      .where("auth_config_id", "=", jwt.id)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_public_keys).toMatch(/^v2:\d+:/);
    expect(expectOk(await tenant.admin.jwtAuth.get({ params: { identityId: identity.id } })).identityJwtAuth).toEqual(
      jwt,
    );
    const updated = expectOk(
      await tenant.admin.jwtAuth.update({
        params: { identityId: identity.id },
        body: { configurationType: "jwks", jwksUrl: `${jwks.url}/keys`, jwksCaCert: ca.caPem, boundSubject: "" },
      }),
    ).identityJwtAuth;
    expect(updated).toMatchObject({
      configurationType: "jwks",
      jwksUrl: `${jwks.url}/keys`,
      jwksCaCert: ca.caPem.trim(),
    });
    expect(updated).toMatchObject({ boundSubject: "", accessTokenTTL: 600, publicKeys: [pem] });

    const token = expectOk(await login(tenant, identity.id, await sign(first, {}, { kid: "k1" }))).accessToken;
    const deleted = expectOk(
      await tenant.admin.jwtAuth.revoke({ params: { identityId: identity.id } }),
    ).identityJwtAuth;
    expect(deleted.id).toBe(jwt.id);
    expect(deleted).not.toHaveProperty("publicKeys");
    expect(deleted).not.toHaveProperty("jwksCaCert");
    expect((await tenant.app.client(token).identities.get({ params: { identityId: identity.id } })).status).toBe(401);
  });

  it("answers the reference's errors", async () => {
    const tenant = await createTenant();
    const { identity } = await attachStatic(tenant);
    const bare = await createBareIdentity(tenant);
    const pem = await exportSPKI(first.publicKey);
    const body = { configurationType: "static" as const, publicKeys: [pem], boundClaims: {} };
    expect(await tenant.admin.jwtAuth.attach({ params: { identityId: identity.id }, body })).toMatchObject({
      status: 400,
      body: { message: "Failed to add JWT Auth to already configured identity" },
    });
    const attach = (b: Record<string, unknown>) =>
      tenant.admin.jwtAuth.attach({ params: { identityId: bare.id }, body: { ...body, ...b } });
    expect((await attach({ publicKeys: [] })).status).toBe(422);
    expect((await attach({ configurationType: "jwks" })).status).toBe(422);
    expect((await attach({ configurationType: "other" })).status).toBe(422);
    expect((await attach({ accessTokenTTL: 100, accessTokenMaxTTL: 10 })).status).toBe(422);
    expect(await attach({ publicKeys: ["not a key"] })).toMatchObject({
      status: 400,
      body: { message: "Each public key must be a PEM public key or certificate" },
    });
    expect(await attach({ configurationType: "jwks", jwksUrl: "http://169.254.169.254/keys" })).toMatchObject({
      status: 400,
      body: { message: "Local IPs not allowed as URL" },
    });
    expect(await tenant.admin.jwtAuth.get({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have JWT Auth attached" },
    });
    expect(
      await tenant.admin.jwtAuth.update({ params: { identityId: bare.id }, body: { configurationType: "static" } }),
    ).toMatchObject({ status: 400, body: { message: "Failed to update JWT Auth" } });
    expect(await tenant.admin.jwtAuth.revoke({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have JWT auth" },
    });
    const other = await createTenant();
    expect((await other.admin.jwtAuth.get({ params: { identityId: identity.id } })).status).toBe(404);
    expect((await other.admin.jwtAuth.revoke({ params: { identityId: identity.id } })).status).toBe(404);
  });

  it("refuses callers without permission (403) on every config route", async () => {
    const tenant = await createTenant();
    const { identity } = await attachStatic(tenant);
    const bare = await createBareIdentity(tenant);
    const outsider = await createUnprivileged(tenant);
    const pem = await exportSPKI(first.publicKey);
    const body = { configurationType: "static" as const, publicKeys: [pem], boundClaims: {} };
    expect((await outsider.client.jwtAuth.attach({ params: { identityId: bare.id }, body })).status).toBe(403);
    expect((await outsider.client.jwtAuth.get({ params: { identityId: identity.id } })).status).toBe(403);
    expect(
      (
        await outsider.client.jwtAuth.update({
          params: { identityId: identity.id },
          body: { configurationType: "static" },
        })
      ).status,
    ).toBe(403);
    expect((await outsider.client.jwtAuth.revoke({ params: { identityId: identity.id } })).status).toBe(403);
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    expectOk(await tenant.admin.jwtAuth.attach({ params: { identityId: owned.id }, body }));
    const member = await createUnprivileged(tenant, project.id);
    expect(await member.client.jwtAuth.revoke({ params: { identityId: owned.id } })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to revoke-auth on identity" },
    });
  });
});

describe("JWT auth login", () => {
  it("logs in with a static key, issues the configured token and records the verified claims", async () => {
    const tenant = await createTenant();
    const { identity } = await attachStatic(tenant, {
      accessTokenTTL: 120,
      accessTokenMaxTTL: 240,
      boundAudiences: "keyward",
      boundSubject: "deploy-*",
      boundClaims: { team: "platform", "ci.repo": "org/*" },
    });
    const res = expectOk(await login(tenant, identity.id, await sign(first)));
    expect(res).toMatchObject({ expiresIn: 120, accessTokenMaxTTL: 240, tokenType: "Bearer" });
    // Authenticated (403 for want of permission, not 401) as the identity.
    expect(
      (await tenant.app.client(res.accessToken).identities.get({ params: { identityId: identity.id } })).status,
    ).toBe(403);
    const claims = await tenant.app.deps.db
      .selectFrom("identity_access_token_claims as c")
      .innerJoin("identity_access_tokens as t", "t.id", "c.token_id")
      .select(["c.auth_method", "c.claims"])
      .where("t.identity_id", "=", identity.id)
      .executeTakeFirstOrThrow();
    expect(claims).toMatchObject({
      auth_method: "jwt-auth",
      claims: { sub: "deploy-api", team: "platform", ci: { repo: "org/api" } },
    });
  });

  it("logs in through a JWKS over the configured CA and refetches once for an unknown kid", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    expectOk(
      await tenant.admin.jwtAuth.attach({
        params: { identityId: identity.id },
        body: { configurationType: "jwks", jwksUrl: `${jwks.url}/rotating`, jwksCaCert: ca.caPem, boundClaims: {} },
      }),
    );
    const before = jwks.requests();
    expectOk(await login(tenant, identity.id, await sign(first, {}, { kid: "k1" })));
    expectOk(await login(tenant, identity.id, await sign(first, {}, { kid: "k1" })));
    expect(jwks.requests() - before).toBe(1);
    served = [...served, { ...(await exportJWK(second.publicKey)), kid: "k2", alg: "ES256" }];
    expectOk(await login(tenant, identity.id, await sign(second, {}, { kid: "k2", alg: "ES256" })));
    expect(jwks.requests() - before).toBe(2);
    const unknown = await login(tenant, identity.id, await sign(second, {}, { kid: "k3", alg: "ES256" }));
    expect(unknown.status).toBe(401);
    expect(jwks.requests() - before).toBe(2);

    const untrusted = await createBareIdentity(tenant);
    expectOk(
      await tenant.admin.jwtAuth.attach({
        params: { identityId: untrusted.id },
        body: { configurationType: "jwks", jwksUrl: `${jwks.url}/untrusted`, boundClaims: {} },
      }),
    );
    expect(await login(tenant, untrusted.id, await sign(first, {}, { kid: "k1" }))).toMatchObject({
      status: 401,
      body: { message: expect.stringMatching(/^Access denied: Failed to fetch JWKS: /) },
    });
  });

  it("refuses alg none, expired, foreign-key, HMAC-with-public-key and undecodable tokens", async () => {
    const tenant = await createTenant();
    const { identity } = await attachStatic(tenant);
    const none = `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ sub: "deploy-api", iss: ISSUER, exp: Math.floor(Date.now() / 1000) + 60 })}.`;
    const pem = await exportSPKI(first.publicKey);
    const hsInput = `${b64url({ alg: "HS256", typ: "JWT" })}.${b64url({ sub: "x", iss: ISSUER, exp: Math.floor(Date.now() / 1000) + 60 })}`;
    const hs = `${hsInput}.${createHmac("sha256", pem).update(hsInput).digest("base64url")}`;
    const other = await generateKeyPair("RS256");
    for (const jwt of [
      none,
      hs,
      await sign(other),
      await sign(first, {}, { exp: Math.floor(Date.now() / 1000) - 60 }),
    ]) {
      expect(await login(tenant, identity.id, jwt)).toMatchObject({
        status: 401,
        body: { message: expect.stringMatching(/^Access denied: JWT verification failed with all keys\. Errors - .+/) },
      });
    }
    expect((await login(tenant, identity.id, await sign(first, {}, { exp: 1 }))).body).toMatchObject({
      message: "Access denied: JWT verification failed with all keys. Errors - jwt expired",
    });
    expect(await login(tenant, identity.id, "not.a.jwt")).toMatchObject({
      status: 401,
      body: { message: "Invalid JWT" },
    });
    expect(await login(tenant, MISSING_UUID, await sign(first))).toMatchObject({
      status: 404,
      body: { message: "JWT auth method not found for identity, did you configure JWT auth?" },
    });
  });

  it("splits bound-field refusals between 401 and 403 as the reference does", async () => {
    const tenant = await createTenant();
    const { identity } = await attachStatic(tenant, {
      boundAudiences: "keyward",
      boundSubject: "deploy-*",
      boundClaims: { team: "platform", "ci.repo": "org/*" },
    });
    const cases: [Record<string, unknown>, number, string][] = [
      [{ iss: "https://elsewhere" }, 403, "Access denied: issuer mismatch"],
      [{ sub: undefined }, 401, "Access denied: token has no subject field"],
      [{ sub: "build-api" }, 403, "Access denied: subject not allowed"],
      [{ aud: undefined }, 401, "Access denied: token has no audience field"],
      [{ aud: "someone-else" }, 401, "Access denied: token audience not allowed"],
      [{ team: undefined }, 401, "Access denied: token has no team field"],
      [{ team: "qa" }, 401, "Access denied: claim mismatch for field team"],
      [{ ci: { repo: "other/api" } }, 401, "Access denied: claim mismatch for field ci.repo"],
    ];
    for (const [claims, status, message] of cases) {
      const jwt = await new SignJWT({
        sub: "deploy-api",
        aud: "keyward",
        team: "platform",
        ci: { repo: "org/api" },
        iss: ISSUER,
        ...claims,
      })
        .setProtectedHeader({ alg: "RS256" })
        .setExpirationTime("5m")
        .sign(first.privateKey);
      expect(await login(tenant, identity.id, jwt), JSON.stringify(claims)).toMatchObject({
        status,
        body: { message },
      });
    }
  });
});

describe("JWT auth claims in permission templates", () => {
  it("grants what {{identity.auth.jwt.claims.<key>}} names for the token's own login only", async () => {
    const tenant = await createTenant();
    const { identity } = await attachStatic(tenant);
    const status = await claimTemplateProbe(tenant, identity.id, "{{identity.auth.jwt.claims.team}}", [
      "platform",
      "qa",
    ]);
    const platform = expectOk(await login(tenant, identity.id, await sign(first, { team: "platform" }))).accessToken;
    const qa = expectOk(await login(tenant, identity.id, await sign(first, { team: "qa" }))).accessToken;
    expect([await status(platform, "platform"), await status(platform, "qa")]).toEqual([200, 403]);
    expect([await status(qa, "qa"), await status(qa, "platform")]).toEqual([200, 403]);
  });
});
