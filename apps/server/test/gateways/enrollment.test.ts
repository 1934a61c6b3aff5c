import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createAwsGateway, createTokenGateway, enrolGateway, missingId } from "./helpers";

describe("POST /api/v3/gateways/:gatewayId/token", () => {
  it("mints a one-hour enrolment token and makes the gateway revocable", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const before = Date.now();
    const minted = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    expect(minted.token).toMatch(/^kwge_/);
    expect(minted.ttl).toBe(3600);
    const expiresAt = new Date(minted.expiresAt).getTime();
    expect(expiresAt).toBeGreaterThan(before + 3590_000);
    expect(expiresAt).toBeLessThan(Date.now() + 3610_000);
    const read = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(read.canRevoke).toBe(true);
  });

  it("replaces any unused token", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const first = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    const second = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    const stale = await tenant.anonymous.gateways.login({ body: { method: "token", token: first.token } });
    expect(stale.status).toBe(400);
    expect(stale.body).toMatchObject({ message: "Invalid enrollment token" });
    expectOk(await tenant.anonymous.gateways.login({ body: { method: "token", token: second.token } }));
  });

  it("refuses gateways that do not use token auth with 400", async () => {
    const tenant = await createTenant();
    const aws = await createAwsGateway(tenant);
    const res = await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: aws.id } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      message: "Gateway is not configured for token authentication (current method: aws)",
    });
    const identity = await createIdentity(tenant);
    const linked = expectOk(
      await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
      }),
    );
    expect((await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: linked.id } })).status).toBe(400);
  });

  it("answers 401, 422, 403 and 404", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const foreign = await createTokenGateway(other);
    expect((await tenant.anonymous.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } })).status).toBe(
      401,
    );
    expect((await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: "nope" } })).status).toBe(422);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit-gateways on gateway" });
    for (const gatewayId of [foreign.id, missingId()]) {
      const res = await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Gateway ${gatewayId} not found` });
    }
  });
});

describe("POST /api/v3/gateways/login", () => {
  it("exchanges an enrolment token once for a gateway access token", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    const login = expectOk(await tenant.anonymous.gateways.login({ body: { method: "token", token } }));
    expect(login).toEqual({ accessToken: expect.stringMatching(/^kwgw_/), gatewayId: gateway.id, tokenType: "Bearer" });

    const twice = await tenant.anonymous.gateways.login({ body: { method: "token", token } });
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({
      statusCode: 400,
      error: "BadRequest",
      message: "Enrollment token has already been used",
    });
    // The first login's access token still works: the failed second use changed nothing.
    expectOk(await tenant.app.client(login.accessToken).gateways.heartbeat({ body: {} }));
  });

  it("lets exactly one of many concurrent logins spend a token", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    const results = await Promise.all(
      Array.from({ length: 8 }, () => tenant.anonymous.gateways.login({ body: { method: "token", token } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(7);
    const winner = results.find((r) => r.status === 200)!;
    if (winner.status !== 200) throw new Error("no winner");
    expectOk(await tenant.app.client(winner.body.accessToken).gateways.heartbeat({ body: {} }));
  });

  it("refuses unknown and expired tokens with 400", async () => {
    const tenant = await createTenant();
    const unknown = await tenant.anonymous.gateways.login({ body: { method: "token", token: "kwge_unknown" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ message: "Invalid enrollment token" });

    const gateway = await createTokenGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    await tenant.app.deps.db
      .updateTable("gateway_enrollment_tokens")
      .set({ expires_at: new Date(Date.now() - 60_000) })
      .where("gateway_id", "=", gateway.id)
      .execute();
    const expired = await tenant.anonymous.gateways.login({ body: { method: "token", token } });
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ message: "Enrollment token has expired" });
  });

  it("validates the body with 422", async () => {
    const tenant = await createTenant();
    for (const body of [
      {},
      { method: "token" },
      { method: "token", token: "" },
      { method: "ldap", token: "x" },
      { method: "aws", gatewayId: "x" },
    ]) {
      const res = await tenant.anonymous.gateways.login({ body: body as never });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("does not serve AWS logins: 401 for a gateway without AWS auth, 400 for one with it", async () => {
    const tenant = await createTenant();
    const aws = await createAwsGateway(tenant);
    const token = await createTokenGateway(tenant);
    const body = { method: "aws" as const, iamRequestBody: "b", iamRequestHeaders: "h" };
    const unknown = await tenant.anonymous.gateways.login({ body: { ...body, gatewayId: missingId() } });
    expect(unknown.status).toBe(401);
    const mismatch = await tenant.anonymous.gateways.login({ body: { ...body, gatewayId: token.id } });
    expect(mismatch.status).toBe(401);
    expect(mismatch.body).toMatchObject({ message: "Gateway is not configured for AWS authentication" });
    const unsupported = await tenant.anonymous.gateways.login({ body: { ...body, gatewayId: aws.id } });
    expect(unsupported.status).toBe(400);
  });

  it("starts a new token generation: the previous access token stops working", async () => {
    const tenant = await createTenant();
    const { gateway, client: firstClient } = await enrolGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    const second = expectOk(await tenant.anonymous.gateways.login({ body: { method: "token", token } }));
    expect((await firstClient.gateways.heartbeat({ body: {} })).status).toBe(401);
    expectOk(await tenant.app.client(second.accessToken).gateways.heartbeat({ body: {} }));
  });
});
