import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

describe("GET /api/v1/auth/token/self", () => {
  it("describes the calling token: identity, organization, method, expiry and uses, never the token", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, {
      orgRole: "no-access",
      tokenAuth: { accessTokenTTL: 600, accessTokenMaxTTL: 3600, accessTokenNumUsesLimit: 5 },
    });
    const res = await identity.client.accessTokens.self();
    expect(res.status).toBe(200);
    const self = expectOk(res);
    expect(self.identity).toMatchObject({ id: identity.id, projectId: null });
    expect(self.organization.id).toBe(tenant.orgId);
    expect(self.token).toMatchObject({
      identityId: identity.id,
      authMethod: "token-auth",
      accessTokenTTL: 600,
      accessTokenMaxTTL: 3600,
      accessTokenNumUses: 1,
      accessTokenNumUsesLimit: 5,
      isAccessTokenRevoked: false,
    });
    const created = Date.parse(self.token.createdAt);
    expect(Date.parse(self.token.expiresAt!) - created).toBe(600_000);
    expect(Date.parse(self.token.maxExpiresAt!) - created).toBe(3_600_000);
    expect(JSON.stringify(res.body)).not.toContain(identity.token);
    expect(expectOk(await identity.client.accessTokens.self()).token.accessTokenNumUses).toBe(2);
  });

  it("answers null expiry for a token without TTL, and names a project-owned identity's project", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { identity } = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "svc" } }),
    );
    expectOk(
      await tenant.admin.tokenAuth.attach({
        params: { identityId: identity.id },
        body: { accessTokenTTL: 0, accessTokenMaxTTL: 0 },
      }),
    );
    const { accessToken } = expectOk(
      await tenant.admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }),
    );
    const self = expectOk(await tenant.app.client(accessToken).accessTokens.self());
    expect(self.identity).toMatchObject({ id: identity.id, name: "svc", projectId: project.id });
    expect(self.token).toMatchObject({ expiresAt: null, maxExpiresAt: null });
  });

  it("answers 401 without a token, with an unknown one and with a revoked one", async () => {
    const tenant = await createTenant();
    expect((await tenant.anonymous.accessTokens.self()).status).toBe(401);
    expect((await tenant.app.client("kw_not-a-real-token").accessTokens.self()).status).toBe(401);
    const identity = await createIdentity(tenant);
    expectOk(await tenant.anonymous.accessTokens.revoke({ body: { accessToken: identity.token } }));
    expect(await identity.client.accessTokens.self()).toMatchObject({
      status: 401,
      body: { message: "No identity access token found" },
    });
  });
});
