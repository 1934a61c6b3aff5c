import { describe, expect, it } from "vitest";
import { limitOfRoute } from "../../src/app/rate-limit";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createTokenGateway, enrolGateway } from "./helpers";

/** The requests exactly as the Infisical gateway CLI (Go, resty) sends them. */
const cliHeaders = { "user-agent": "infisical-cli" };

const enrollAsCli = (baseUrl: string, token: string) =>
  fetch(`${baseUrl}/api/v3/gateways/token-auth/enroll`, {
    method: "POST",
    headers: { ...cliHeaders, "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });

const heartbeatAsCli = (baseUrl: string, accessToken?: string) =>
  fetch(`${baseUrl}/api/v2/gateways/heartbeat`, {
    method: "POST",
    headers: { ...cliHeaders, ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}) },
  });

describe("POST /api/v3/gateways/token-auth/enroll", () => {
  it("spends an enrolment token for a gateway access token, as login does", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));

    const res = await enrollAsCli(tenant.app.baseUrl, token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { accessToken: string; gatewayId: string };
    expect(body).toEqual({ accessToken: expect.stringMatching(/^kwgw_/), gatewayId: gateway.id });

    // The token it answers is a working gateway access token.
    expectOk(await tenant.app.client(body.accessToken).gateways.heartbeat({ body: {} }));
    // And the enrolment token is spent, on either route.
    const again = await tenant.anonymous.gateways.tokenAuthEnroll({ body: { token } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "Enrollment token has already been used" });
    const viaLogin = await tenant.anonymous.gateways.login({ body: { method: "token", token } });
    expect(viaLogin.status).toBe(400);
  });

  it("refuses an unknown, used or expired token with 400, as login does", async () => {
    const tenant = await createTenant();
    const unknown = await enrollAsCli(tenant.app.baseUrl, "kwge_unknown");
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ statusCode: 400, message: "Invalid enrollment token" });

    const gateway = await createTokenGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    await tenant.app.deps.db
      .updateTable("gateway_enrollment_tokens")
      .set({ expires_at: new Date(Date.now() - 60_000) })
      .where("gateway_id", "=", gateway.id)
      .execute();
    const expired = await tenant.anonymous.gateways.tokenAuthEnroll({ body: { token } });
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ message: "Enrollment token has expired" });
  });

  it("validates the body with 422", async () => {
    const tenant = await createTenant();
    for (const body of [{}, { token: "" }, { token: 42 }, { token: "x".repeat(513) }]) {
      const res = await tenant.anonymous.gateways.tokenAuthEnroll({ body: body as never });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("counts against the login rate limit", () => {
    expect(limitOfRoute({ method: "POST", path: "/api/v3/gateways/token-auth/enroll" })?.name).toBe("login");
  });
});

describe("POST /api/v2/gateways/heartbeat", () => {
  it("records liveness for the calling gateway from a request without a body", async () => {
    const tenant = await createTenant();
    const { gateway, accessToken } = await enrolGateway(tenant);
    const res = await heartbeatAsCli(tenant.app.baseUrl, accessToken);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "Successfully triggered heartbeat" });
    const read = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(read).toMatchObject({ heartbeatTTL: 3600, isHealthy: true });
  });

  it("accepts the linked identity's own access token for an identity-linked gateway", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant);
    const gateway = expectOk(
      await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
      }),
    );
    expectOk(await identity.client.gateways.heartbeatV2({ body: {} }));
    const read = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(read.isHealthy).toBe(true);
  });

  it("answers 401 without a token, with a forged one and after revocation; 404 for an identity running no gateway", async () => {
    const tenant = await createTenant();
    const { gateway, accessToken } = await enrolGateway(tenant);

    const missing = await heartbeatAsCli(tenant.app.baseUrl);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ message: "Token missing" });
    const forged = await heartbeatAsCli(tenant.app.baseUrl, "kwgw_not-a-real-token");
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ message: "Invalid gateway access token" });

    expectOk(await tenant.admin.gateways.revoke({ params: { gatewayId: gateway.id } }));
    const revoked = await heartbeatAsCli(tenant.app.baseUrl, accessToken);
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({ message: "Invalid gateway access token" });

    const stranger = await tenant.admin.gateways.heartbeatV2({ body: {} });
    expect(stranger.status).toBe(404);
    expect(stranger.body).toMatchObject({ message: `Gateway for identity ${tenant.adminIdentityId} not found.` });
  });
});
