import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createAwsGateway, createTokenGateway, enrolGateway, missingId, sleep } from "./helpers";

describe("POST /api/v3/gateways/heartbeat", () => {
  it("records liveness for the calling gateway with the default one-hour TTL", async () => {
    const tenant = await createTenant();
    const { gateway, client } = await enrolGateway(tenant);
    const enrolled = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(enrolled).toMatchObject({ heartbeat: null, heartbeatTTL: null, isHealthy: false, canRevoke: true });

    const res = await client.gateways.heartbeat({ body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: "Successfully triggered heartbeat" });
    const alive = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(alive).toMatchObject({ heartbeatTTL: 3600, isHealthy: true });
    expect(Math.abs(new Date(alive.heartbeat!).getTime() - Date.now())).toBeLessThan(60_000);
    expect(alive.updatedAt).toBe(enrolled.updatedAt);
  });

  it("accepts a heartbeat without a body", async () => {
    const tenant = await createTenant();
    const { gateway, accessToken } = await enrolGateway(tenant);
    const res = await fetch(`${tenant.app.baseUrl}/api/v3/gateways/heartbeat`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(res.status).toBe(200);
    const read = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(read.isHealthy).toBe(true);
  });

  it("reports a gateway unhealthy once its heartbeat is older than its TTL", async () => {
    const tenant = await createTenant();
    const { gateway, client } = await enrolGateway(tenant);
    expectOk(await client.gateways.heartbeat({ body: { heartbeatTTL: 1 } }));
    const fresh = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(fresh).toMatchObject({ heartbeatTTL: 1, isHealthy: true });

    await sleep(1_200);
    const stale = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(stale).toMatchObject({ heartbeat: fresh.heartbeat, heartbeatTTL: 1, isHealthy: false });
    const listed = expectOk(await tenant.admin.gateways.list()).find((g) => g.id === gateway.id);
    expect(listed?.isHealthy).toBe(false);

    expectOk(await client.gateways.heartbeat({ body: { heartbeatTTL: 600 } }));
    const revived = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(revived).toMatchObject({ heartbeatTTL: 600, isHealthy: true });
  });

  it("authenticates a gateway token, not an identity token, and before validation", async () => {
    const tenant = await createTenant();
    const { client, accessToken } = await enrolGateway(tenant);
    const missing = await tenant.anonymous.gateways.heartbeat({ body: { heartbeatTTL: 0 } });
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ message: "Token missing" });
    const forged = await tenant.app.client("kwgw_not-a-real-token").gateways.heartbeat({ body: { heartbeatTTL: 0 } });
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ message: "Invalid gateway access token" });

    for (const heartbeatTTL of [0, 86_401, 1.5]) {
      expect((await client.gateways.heartbeat({ body: { heartbeatTTL } })).status).toBe(422);
    }
    // A gateway token is not an identity token: identity routes refuse it.
    const asIdentity = await tenant.app.client(accessToken).gateways.list();
    expect(asIdentity.status).toBe(401);
    // An identity token whose identity runs no gateway has nothing to heartbeat for.
    const stranger = await tenant.admin.gateways.heartbeat({ body: {} });
    expect(stranger.status).toBe(404);
    expect(stranger.body).toMatchObject({ message: `Gateway for identity ${tenant.adminIdentityId} not found.` });
  });

  it("accepts the linked identity's own access token for an identity-linked gateway", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant);
    const gateway = expectOk(
      await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
      }),
    );
    expectOk(await identity.client.gateways.heartbeat({ body: { heartbeatTTL: 120 } }));
    const read = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(read).toMatchObject({ heartbeatTTL: 120, isHealthy: true, canRevoke: false });
  });
});

describe("POST /api/v3/gateways/:gatewayId/revoke", () => {
  it("refuses the revoked gateway's token and clears its liveness", async () => {
    const tenant = await createTenant();
    const { gateway, client } = await enrolGateway(tenant);
    expectOk(await client.gateways.heartbeat({ body: {} }));
    const res = await tenant.admin.gateways.revoke({ params: { gatewayId: gateway.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ method: "token", deletedTokenCount: 1 });

    const refused = await client.gateways.heartbeat({ body: {} });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ message: "Invalid gateway access token" });
    const read = expectOk(await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } }));
    expect(read).toMatchObject({ heartbeat: null, heartbeatTTL: null, isHealthy: false });
  });

  it("invalidates unused enrolment tokens", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    expect(expectOk(await tenant.admin.gateways.revoke({ params: { gatewayId: gateway.id } }))).toEqual({
      method: "token",
      deletedTokenCount: 1,
    });
    const login = await tenant.anonymous.gateways.login({ body: { method: "token", token } });
    expect(login.status).toBe(400);
    expect(login.body).toMatchObject({ message: "Invalid enrollment token" });
  });

  it("revokes AWS gateways and refuses identity-linked ones with 400", async () => {
    const tenant = await createTenant();
    const aws = await createAwsGateway(tenant);
    expect(expectOk(await tenant.admin.gateways.revoke({ params: { gatewayId: aws.id } }))).toEqual({
      method: "aws",
      deletedTokenCount: 0,
    });
    const identity = await createIdentity(tenant);
    const linked = expectOk(
      await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
      }),
    );
    const res = await tenant.admin.gateways.revoke({ params: { gatewayId: linked.id } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      message:
        "Identity-bound gateways cannot be revoked directly. Create a new gateway with AWS or Token auth instead.",
    });
  });

  it("answers 401, 422, 403 and 404", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const foreign = await createTokenGateway(other);
    expect((await tenant.anonymous.gateways.revoke({ params: { gatewayId: gateway.id } })).status).toBe(401);
    expect((await tenant.admin.gateways.revoke({ params: { gatewayId: "nope" } })).status).toBe(422);
    const member = await createIdentity(tenant, { orgRole: "member" });
    expect((await member.client.gateways.revoke({ params: { gatewayId: gateway.id } })).status).toBe(403);
    for (const gatewayId of [foreign.id, missingId()]) {
      expect((await tenant.admin.gateways.revoke({ params: { gatewayId } })).status).toBe(404);
    }
  });

  it("ends a deleted gateway's token too", async () => {
    const tenant = await createTenant();
    const { gateway, client } = await enrolGateway(tenant);
    expectOk(await tenant.admin.gateways.delete({ params: { gatewayId: gateway.id } }));
    expect((await client.gateways.heartbeat({ body: {} })).status).toBe(401);
  });
});
