import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { AWS_METHOD, createAwsGateway, createTokenGateway, missingId } from "./helpers";

const SPEC_FIELDS = [
  "authMethod",
  "canRevoke",
  "createdAt",
  "directAddress",
  "directHeartbeat",
  "heartbeat",
  "heartbeatTTL",
  "id",
  "identityId",
  "isHealthy",
  "name",
  "relayId",
  "updatedAt",
];

describe("POST /api/v3/gateways", () => {
  it("creates a token gateway with nothing to revoke yet", async () => {
    const tenant = await createTenant();
    const name = uniqueName("gateway");
    const gateway = await createTokenGateway(tenant, name);
    expect(Object.keys(gateway).sort()).toEqual(SPEC_FIELDS);
    expect(gateway).toMatchObject({
      name,
      identityId: null,
      relayId: null,
      directAddress: null,
      canRevoke: false,
      heartbeat: null,
      directHeartbeat: null,
      heartbeatTTL: null,
      isHealthy: false,
      authMethod: { method: "token", config: {} },
    });
  });

  it("creates an AWS gateway with normalised allow-lists and the default STS endpoint", async () => {
    const tenant = await createTenant();
    const gateway = await createAwsGateway(tenant);
    expect(gateway.authMethod).toMatchObject({
      method: "aws",
      config: {
        stsEndpoint: "https://sts.amazonaws.com/",
        allowedAccountIds: "123456789012, 210987654321",
        allowedPrincipalArns: "arn:aws:iam::123456789012:role/gateway",
      },
    });
    if (gateway.authMethod.method !== "aws") throw new Error("expected aws");
    expect(gateway.authMethod.config.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(gateway.canRevoke).toBe(false);
  });

  it("links a gateway to an identity of the organization", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant);
    const gateway = expectOk(
      await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
      }),
    );
    expect(gateway.identityId).toBe(identity.id);
    expect(gateway.canRevoke).toBe(false);
    expect(gateway.authMethod.method).toBe("identity");
    if (gateway.authMethod.method !== "identity") throw new Error("expected identity");
    expect(gateway.authMethod.config.identityId).toBe(identity.id);
    expect(gateway.authMethod.config.identityName).toMatch(/^identity-/);

    const again = await tenant.admin.gateways.create({
      body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
    });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: `Identity with ID ${identity.id} is already linked to a gateway` });
  });

  it("refuses identities of other organizations and unknown ones with 404", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const foreign = await createIdentity(other);
    for (const identityId of [foreign.id, missingId()]) {
      const res = await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId } },
      });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Failed to find identity with ID ${identityId}` });
    }
  });

  it("answers a duplicate name in the organization with 400, but allows it in another", async () => {
    const tenant = await createTenant();
    const name = uniqueName("gateway");
    await createTokenGateway(tenant, name);
    const res = await tenant.admin.gateways.create({ body: { name, authMethod: { method: "token" } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      error: "BadRequest",
      message: `Gateway with name "${name}" already exists`,
    });
    const other = await createTenant();
    await createTokenGateway(other, name);
  });

  it("validates the body with 422", async () => {
    const tenant = await createTenant();
    const bodies: unknown[] = [
      { name: "", authMethod: { method: "token" } },
      { name: "x".repeat(65), authMethod: { method: "token" } },
      { name: "gw" },
      { name: "gw", authMethod: { method: "ldap" } },
      { name: "gw", authMethod: { method: "aws" } },
      { name: "gw", authMethod: { ...AWS_METHOD, allowedAccountIds: "12345" } },
      { name: "gw", authMethod: { ...AWS_METHOD, allowedPrincipalArns: "arn:aws:s3:::bucket" } },
      { name: "gw", authMethod: { ...AWS_METHOD, stsEndpoint: "ftp://sts.example" } },
      { name: "gw", authMethod: { method: "identity", identityId: "not-a-uuid" } },
    ];
    for (const body of bodies) {
      const res = await tenant.admin.gateways.create({ body: body as never });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ statusCode: 422, error: "ValidationFailure" });
    }
    const neither = await tenant.admin.gateways.create({
      body: { name: "gw", authMethod: { method: "aws" } } as never,
    });
    expect(JSON.stringify(neither.body)).toContain(
      "At least one of allowedPrincipalArns or allowedAccountIds must be set",
    );
  });

  it("needs create-gateways (403) and a token (401, before validation)", async () => {
    const tenant = await createTenant();
    const caller = await createIdentity(tenant, { orgRole: "no-access" });
    const res = await caller.client.gateways.create({
      body: { name: uniqueName("gw"), authMethod: { method: "token" } },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create-gateways on gateway",
    });
    // The org member role creates gateways, as Infisical's does.
    const member = await createIdentity(tenant, { orgRole: "member" });
    const created = await member.client.gateways.create({
      body: { name: uniqueName("gw"), authMethod: { method: "token" } },
    });
    expect(created.status).toBe(200);
    const anonymous = await tenant.anonymous.gateways.create({ body: { name: "", authMethod: { method: "token" } } });
    expect(anonymous.status).toBe(401);
  });
});

describe("GET /api/v3/gateways and /api/v3/gateways/:gatewayId", () => {
  it("lists only the organization's gateways, for members too", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const mine = await createTokenGateway(tenant);
    const aws = await createAwsGateway(tenant);
    const foreign = await createTokenGateway(other);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const list = expectOk(await member.client.gateways.list());
    expect(list.map((g) => g.id)).toEqual([mine.id, aws.id]);
    expect(list.map((g) => g.id)).not.toContain(foreign.id);
    expect(list[1]).toEqual(aws);

    const noAccess = await createIdentity(tenant, { orgRole: "no-access" });
    const denied = await noAccess.client.gateways.list();
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to list-gateways on gateway" });
    expect((await tenant.anonymous.gateways.list()).status).toBe(401);
  });

  it("reads one gateway, unwrapped, exactly as created", async () => {
    const tenant = await createTenant();
    const gateway = await createAwsGateway(tenant);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const res = await member.client.gateways.get({ params: { gatewayId: gateway.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(gateway);
  });

  it("answers 422 for a non-UUID id, 404 for a missing or foreign one, 403 without list-gateways", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const foreign = await createTokenGateway(other);
    const mine = await createTokenGateway(tenant);

    const invalid = await tenant.admin.gateways.get({ params: { gatewayId: "not-a-uuid" } });
    expect(invalid.status).toBe(422);
    for (const gatewayId of [missingId(), foreign.id]) {
      const res = await tenant.admin.gateways.get({ params: { gatewayId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, error: "NotFound", message: `Gateway ${gatewayId} not found` });
      expect(JSON.stringify(res.body)).not.toContain(foreign.name);
    }
    const noAccess = await createIdentity(tenant, { orgRole: "no-access" });
    const denied = await noAccess.client.gateways.get({ params: { gatewayId: mine.id } });
    expect(denied.status).toBe(403);
    // Existence is checked first, so a missing gateway stays 404 even without permission.
    expect((await noAccess.client.gateways.get({ params: { gatewayId: foreign.id } })).status).toBe(404);
    expect((await tenant.anonymous.gateways.get({ params: { gatewayId: "not-a-uuid" } })).status).toBe(401);
  });
});

describe("PATCH /api/v3/gateways/:gatewayId", () => {
  it("switches between token and AWS auth and renames", async () => {
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const toAws = expectOk(
      await tenant.admin.gateways.update({ params: { gatewayId: gateway.id }, body: { authMethod: AWS_METHOD } }),
    );
    expect(toAws.authMethod.method).toBe("aws");
    if (toAws.authMethod.method !== "aws") throw new Error("expected aws");
    const configId = toAws.authMethod.config.id;

    const edited = expectOk(
      await tenant.admin.gateways.update({
        params: { gatewayId: gateway.id },
        body: {
          authMethod: { ...AWS_METHOD, allowedAccountIds: "", stsEndpoint: "https://sts.eu-west-1.amazonaws.com/" },
        },
      }),
    );
    expect(edited.authMethod).toMatchObject({
      method: "aws",
      config: { id: configId, allowedAccountIds: "", stsEndpoint: "https://sts.eu-west-1.amazonaws.com/" },
    });

    const name = uniqueName("renamed");
    const back = expectOk(
      await tenant.admin.gateways.update({
        params: { gatewayId: gateway.id },
        body: { name, authMethod: { method: "token" } },
      }),
    );
    expect(back).toMatchObject({ id: gateway.id, name, authMethod: { method: "token", config: {} } });
    const unchanged = expectOk(await tenant.admin.gateways.update({ params: { gatewayId: gateway.id }, body: {} }));
    expect(unchanged).toEqual(back);
  });

  it("applies the business rules with 400", async () => {
    const tenant = await createTenant();
    const first = await createTokenGateway(tenant);
    const second = await createTokenGateway(tenant);
    const duplicate = await tenant.admin.gateways.update({
      params: { gatewayId: second.id },
      body: { name: first.name },
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({ message: `Gateway with name "${first.name}" already exists` });

    const identity = await createIdentity(tenant);
    const toIdentity = await tenant.admin.gateways.update({
      params: { gatewayId: first.id },
      body: { authMethod: { method: "identity", identityId: identity.id } },
    });
    expect(toIdentity.status).toBe(400);

    const linked = expectOk(
      await tenant.admin.gateways.create({
        body: { name: uniqueName("gw"), authMethod: { method: "identity", identityId: identity.id } },
      }),
    );
    const migrate = await tenant.admin.gateways.update({
      params: { gatewayId: linked.id },
      body: { authMethod: { method: "token" } },
    });
    expect(migrate.status).toBe(400);
    expect(migrate.body).toMatchObject({
      message:
        "This gateway is using legacy machine identity auth. Create a new gateway with the desired auth method instead of migrating this one.",
    });
    const rename = expectOk(
      await tenant.admin.gateways.update({ params: { gatewayId: linked.id }, body: { name: uniqueName("gw") } }),
    );
    expect(rename.authMethod.method).toBe("identity");
  });

  it("answers 401, 422, 403 and 404 in that order", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const foreign = await createTokenGateway(other);
    expect(
      (await tenant.anonymous.gateways.update({ params: { gatewayId: gateway.id }, body: { name: "" } })).status,
    ).toBe(401);
    expect((await tenant.admin.gateways.update({ params: { gatewayId: gateway.id }, body: { name: "" } })).status).toBe(
      422,
    );
    expect((await tenant.admin.gateways.update({ params: { gatewayId: "nope" }, body: {} })).status).toBe(422);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.gateways.update({ params: { gatewayId: gateway.id }, body: { name: "x" } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit-gateways on gateway" });
    const missing = await tenant.admin.gateways.update({ params: { gatewayId: foreign.id }, body: { name: "x" } });
    expect(missing.status).toBe(404);
  });
});

describe("DELETE /api/v3/gateways/:gatewayId", () => {
  it("returns the deleted gateway, which is then gone", async () => {
    const tenant = await createTenant();
    const gateway = await createAwsGateway(tenant);
    const res = await tenant.admin.gateways.delete({ params: { gatewayId: gateway.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(gateway);
    expect((await tenant.admin.gateways.get({ params: { gatewayId: gateway.id } })).status).toBe(404);
    // The name is free again.
    await createTokenGateway(tenant, gateway.name);
  });

  it("answers 401, 422, 404 and 403", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const foreign = await createTokenGateway(other);
    expect((await tenant.anonymous.gateways.delete({ params: { gatewayId: gateway.id } })).status).toBe(401);
    expect((await tenant.admin.gateways.delete({ params: { gatewayId: "nope" } })).status).toBe(422);
    expect((await tenant.admin.gateways.delete({ params: { gatewayId: foreign.id } })).status).toBe(404);
    expect((await tenant.admin.gateways.delete({ params: { gatewayId: missingId() } })).status).toBe(404);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.gateways.delete({ params: { gatewayId: gateway.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to delete-gateways on gateway" });
    expect((await other.admin.gateways.get({ params: { gatewayId: foreign.id } })).status).toBe(200);
  });
});
