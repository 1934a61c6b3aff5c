import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("bearer authentication", () => {
  it("rejects a request without a token with 401 Token missing", async () => {
    const tenant = await createTenant();
    const res = await tenant.anonymous.identities.list({ query: {} });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ statusCode: 401, error: "UnauthorizedError", message: "Token missing" });
  });

  it("rejects an unknown token with 401", async () => {
    const tenant = await createTenant();
    const res = await tenant.app.client("kw_not-a-real-token").identities.list({ query: {} });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ message: "No identity access token found" });
  });

  it("checks authentication before validation", async () => {
    const tenant = await createTenant();
    const res = await tenant.anonymous.identities.create({ body: { name: "", organizationId: "", role: "" } });
    expect(res.status).toBe(401);
  });

  it("stops accepting a revoked token at once", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, { orgRole: "member" });
    expect((await identity.client.identities.get({ params: { identityId: identity.id } })).status).toBe(200);
    expectOk(await tenant.anonymous.accessTokens.revoke({ body: { accessToken: identity.token } }));
    const after = await identity.client.identities.get({ params: { identityId: identity.id } });
    expect(after.status).toBe(401);
    const again = await tenant.anonymous.accessTokens.revoke({ body: { accessToken: identity.token } });
    expect(again.status).toBe(401);
    const invalid = await tenant.anonymous.accessTokens.revoke({ body: { accessToken: "" } });
    expect(invalid.status).toBe(422);
  });

  it("expires a token after its TTL", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, {
      orgRole: "member",
      tokenAuth: { accessTokenTTL: 1, accessTokenMaxTTL: 10 },
    });
    expect((await identity.client.identities.get({ params: { identityId: identity.id } })).status).toBe(200);
    await sleep(1_300);
    const expired = await identity.client.identities.get({ params: { identityId: identity.id } });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ message: "Failed to renew MI access token due to TTL expiration" });
  });

  it("spends a use limit of 5 exactly once each under 20 parallel requests", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, { orgRole: "member", tokenAuth: { accessTokenNumUsesLimit: 5 } });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => identity.client.identities.get({ params: { identityId: identity.id } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 401)).toHaveLength(15);
    const rejected = results.find((r) => r.status === 401);
    expect(rejected?.body).toMatchObject({
      message: "Unable to renew because access token number of uses limit reached",
    });
  });

  it("refuses a token from an address outside its trusted IPs with 403", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, {
      orgRole: "member",
      tokenAuth: { accessTokenTrustedIps: [{ ipAddress: "10.0.0.0/8" }] },
    });
    const res = await identity.client.identities.get({ params: { identityId: identity.id } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      message: "You are not allowed to access this resource from the current IP address",
    });
    // A configuration change applies to tokens already issued.
    expectOk(
      await tenant.admin.tokenAuth.update({
        params: { identityId: identity.id },
        body: { accessTokenTrustedIps: [{ ipAddress: "127.0.0.1" }, { ipAddress: "::1" }] },
      }),
    );
    expect((await identity.client.identities.get({ params: { identityId: identity.id } })).status).toBe(200);
  });

  it("ignores X-Forwarded-For when no proxy is trusted", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, {
      orgRole: "member",
      tokenAuth: { accessTokenTrustedIps: [{ ipAddress: "10.1.2.3" }] },
    });
    const res = await fetch(`${tenant.app.baseUrl}/api/v1/identities/${identity.id}`, {
      headers: { authorization: `Bearer ${identity.token}`, "x-forwarded-for": "10.1.2.3" },
    });
    expect(res.status).toBe(403);
  });

  it("stops tokens of a deleted identity", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, { orgRole: "member" });
    expectOk(await tenant.admin.identities.delete({ params: { identityId: identity.id } }));
    expect((await identity.client.projects.list({ query: {} })).status).toBe(401);
  });
});

describe("token renewal", () => {
  it("restarts the TTL within max TTL", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, {
      orgRole: "member",
      tokenAuth: { accessTokenTTL: 2, accessTokenMaxTTL: 60 },
    });
    await sleep(1_200);
    const renewed = expectOk(await tenant.anonymous.accessTokens.renew({ body: { accessToken: identity.token } }));
    expect(renewed).toMatchObject({ expiresIn: 2, accessTokenMaxTTL: 60, tokenType: "Bearer" });
    await sleep(1_200);
    // 2.4 s after issue but 1.2 s after renewal: still valid.
    expect((await identity.client.identities.get({ params: { identityId: identity.id } })).status).toBe(200);
  });

  it("refuses to renew past max TTL", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, {
      orgRole: "member",
      tokenAuth: { accessTokenTTL: 2, accessTokenMaxTTL: 2 },
    });
    const res = await tenant.anonymous.accessTokens.renew({ body: { accessToken: identity.token } });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ message: "Failed to renew MI access token past its Max TTL expiration" });
    const unknown = await tenant.anonymous.accessTokens.renew({ body: { accessToken: "kw_unknown" } });
    expect(unknown.status).toBe(401);
  });
});

describe("tenant isolation", () => {
  it("answers 404 for another organization's identity and project", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const project = await createProject(b);
    const res = await a.admin.identities.get({ params: { identityId: b.adminIdentityId } });
    expect(res.status).toBe(404);
    const proj = await a.admin.projects.get({ params: { projectId: project.id } });
    expect(proj.status).toBe(404);
  });
});
