import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

const bareIdentity = async (tenant: Tenant, role = "no-access") =>
  expectOk(
    await tenant.admin.identities.create({ body: { name: uniqueName("t"), organizationId: tenant.orgId, role } }),
  ).identity;

describe("token auth configuration", () => {
  it("attaches with the spec's defaults", async () => {
    const tenant = await createTenant();
    const identity = await bareIdentity(tenant);
    const { identityTokenAuth } = expectOk(
      await tenant.admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }),
    );
    expect(identityTokenAuth).toMatchObject({
      identityId: identity.id,
      accessTokenTTL: 2_592_000,
      accessTokenMaxTTL: 2_592_000,
      accessTokenNumUsesLimit: 0,
      accessTokenPeriod: 0,
      accessTokenTrustedIps: [
        { ipAddress: "0.0.0.0", type: "ipv4", prefix: 0 },
        { ipAddress: "::", type: "ipv6", prefix: 0 },
      ],
    });
    const got = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(got.identity.authMethods).toEqual(["token-auth"]);
  });

  it("stores trusted IPs in parsed form", async () => {
    const tenant = await createTenant();
    const identity = await bareIdentity(tenant);
    const { identityTokenAuth } = expectOk(
      await tenant.admin.tokenAuth.attach({
        params: { identityId: identity.id },
        body: {
          accessTokenTrustedIps: [
            { ipAddress: "1.2.3.4" },
            { ipAddress: "10.0.0.0/24" },
            { ipAddress: "2001:db8::/32" },
          ],
        },
      }),
    );
    expect(identityTokenAuth.accessTokenTrustedIps).toEqual([
      { ipAddress: "1.2.3.4", type: "ipv4" },
      { ipAddress: "10.0.0.0", type: "ipv4", prefix: 24 },
      { ipAddress: "2001:db8::", type: "ipv6", prefix: 32 },
    ]);
  });

  it("validates bounds (422), TTL against max TTL (422) and IP syntax (400)", async () => {
    const tenant = await createTenant();
    const identity = await bareIdentity(tenant);
    const params = { identityId: identity.id };
    for (const body of [
      { accessTokenTTL: -1 },
      { accessTokenTTL: 315_360_001 },
      { accessTokenNumUsesLimit: -1 },
      { accessTokenTrustedIps: [] },
      { accessTokenTTL: 100, accessTokenMaxTTL: 10 },
      { accessTokenTTL: 100, accessTokenMaxTTL: 0 },
      { accessTokenTTL: 1.5 },
    ]) {
      const res = await tenant.admin.tokenAuth.attach({ params, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    const ttl = await tenant.admin.tokenAuth.attach({ params, body: { accessTokenTTL: 100, accessTokenMaxTTL: 10 } });
    expect((ttl.body as { message: { message: string }[] }).message[0]?.message).toBe(
      "Access Token TTL cannot be greater than Access Token Max TTL.",
    );
    const ip = await tenant.admin.tokenAuth.attach({
      params,
      body: { accessTokenTrustedIps: [{ ipAddress: "300.1.1.1" }] },
    });
    expect(ip.status).toBe(400);
    expect(ip.body).toMatchObject({ message: "The IP is not a valid IPv4, IPv6, or CIDR block" });
  });

  it("refuses a second attach (400) and answers 404/400 when not attached", async () => {
    const tenant = await createTenant();
    const identity = await bareIdentity(tenant);
    const params = { identityId: identity.id };
    expect((await tenant.admin.tokenAuth.get({ params })).status).toBe(404);
    expect((await tenant.admin.tokenAuth.update({ params, body: {} })).body).toMatchObject({
      statusCode: 400,
      message: "The identity does not have Token Auth",
    });
    expect((await tenant.admin.tokenAuth.revoke({ params })).status).toBe(400);
    expect((await tenant.admin.tokenAuth.createToken({ params, body: {} })).status).toBe(400);
    expectOk(await tenant.admin.tokenAuth.attach({ params, body: {} }));
    const again = await tenant.admin.tokenAuth.attach({ params, body: {} });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "Failed to add Token Auth to already configured identity" });
    for (const identityId of ["nope", "00000000-0000-4000-8000-000000000000"]) {
      expect((await tenant.admin.tokenAuth.attach({ params: { identityId }, body: {} })).status).toBe(404);
      expect((await tenant.admin.tokenAuth.get({ params: { identityId } })).status).toBe(404);
    }
  });

  it("updates with merged validation and revokes with its tokens", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, { orgRole: "member" });
    const params = { identityId: identity.id };
    const updated = expectOk(
      await tenant.admin.tokenAuth.update({ params, body: { accessTokenTTL: 60, accessTokenMaxTTL: 120 } }),
    );
    expect(updated.identityTokenAuth).toMatchObject({ accessTokenTTL: 60, accessTokenMaxTTL: 120 });
    const tooLong = await tenant.admin.tokenAuth.update({ params, body: { accessTokenTTL: 500 } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ message: "Access token TTL cannot be greater than max TTL" });
    const revoked = expectOk(await tenant.admin.tokenAuth.revoke({ params }));
    expect(revoked.identityTokenAuth.identityId).toBe(identity.id);
    expect((await identity.client.identities.get({ params })).status).toBe(401);
    expect(expectOk(await tenant.admin.identities.get({ params })).identity.authMethods).toEqual([]);
  });

  it("issues, lists, renames and revokes tokens", async () => {
    const tenant = await createTenant();
    const identity = await bareIdentity(tenant, "member");
    const params = { identityId: identity.id };
    expectOk(
      await tenant.admin.tokenAuth.attach({
        params,
        body: { accessTokenTTL: 3600, accessTokenMaxTTL: 7200, accessTokenNumUsesLimit: 10 },
      }),
    );
    const issued = expectOk(await tenant.admin.tokenAuth.createToken({ params, body: { name: "deploy" } }));
    expect(issued).toMatchObject({ expiresIn: 3600, accessTokenMaxTTL: 7200, tokenType: "Bearer" });
    expect(issued.tokenData).toMatchObject({
      name: "deploy",
      authMethod: "token-auth",
      accessTokenNumUsesLimit: 10,
      isAccessTokenRevoked: false,
    });
    expect(issued.accessToken.length).toBeGreaterThanOrEqual(32);
    const tokens = expectOk(await tenant.admin.tokenAuth.listTokens({ params, query: {} })).tokens;
    expect(tokens.map((t) => t.id)).toEqual([issued.tokenData.id]);
    expect((await tenant.admin.tokenAuth.listTokens({ params, query: { limit: 0 } })).status).toBe(422);
    const renamed = expectOk(
      await tenant.admin.tokenAuth.updateToken({ params: { tokenId: issued.tokenData.id }, body: { name: "ci" } }),
    );
    expect(renamed.token.name).toBe("ci");
    expectOk(await tenant.admin.tokenAuth.revokeTokenById({ params: { tokenId: issued.tokenData.id } }));
    expect((await tenant.app.client(issued.accessToken).identities.get({ params })).status).toBe(401);
    expect((await tenant.admin.tokenAuth.revokeTokenById({ params: { tokenId: "nope" } })).status).toBe(404);
    const other = await createTenant();
    expect(
      (await other.admin.tokenAuth.updateToken({ params: { tokenId: issued.tokenData.id }, body: { name: "x" } }))
        .status,
    ).toBe(404);
  });

  it("requires organization permission (403) and a role boundary for tokens", async () => {
    const tenant = await createTenant();
    const member = await createIdentity(tenant, { orgRole: "member" });
    const target = await bareIdentity(tenant, "no-access");
    const params = { identityId: target.id };
    const attach = await member.client.tokenAuth.attach({ params, body: {} });
    expect(attach.status).toBe(403);
    expect(attach.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on identity",
    });
    expectOk(await tenant.admin.tokenAuth.attach({ params, body: {} }));
    expect((await member.client.tokenAuth.get({ params })).status).toBe(200);
    expect((await member.client.tokenAuth.update({ params, body: {} })).status).toBe(403);
    expect((await member.client.tokenAuth.revoke({ params })).status).toBe(403);
    expect((await member.client.tokenAuth.createToken({ params, body: {} })).status).toBe(403);
    const nobody = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await nobody.client.tokenAuth.listTokens({ params, query: {} })).status).toBe(403);
    // Another org admin holds a role at least as high as the target's, so it may mint tokens for it.
    const otherAdmin = await createIdentity(tenant, { orgRole: "admin" });
    expect((await otherAdmin.client.tokenAuth.createToken({ params, body: {} })).status).toBe(200);
  });

  it("uses project permissions for project-owned identities", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { identity } = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "owned" } }),
    );
    const params = { identityId: identity.id };
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.tokenAuth.attach({ params, body: {} })).status).toBe(403);
    expectOk(await tenant.admin.tokenAuth.attach({ params, body: {} }));
    expect((await viewer.client.tokenAuth.get({ params })).status).toBe(200);
    const denied = await viewer.client.tokenAuth.createToken({ params, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to create-token on identity" });
    const token = expectOk(await tenant.admin.tokenAuth.createToken({ params, body: {} }));
    // The project identity holds no-access: it authenticates but can do nothing in the project.
    const own = tenant.app.client(token.accessToken);
    expect((await own.projects.listEnvironments({ params: { projectId: project.id } })).status).toBe(403);
    expect((await viewer.client.tokenAuth.revoke({ params })).status).toBe(403);
  });
});
