import { describe, expect, it } from "vitest";
import { createTokenGateway } from "../gateways/helpers";
import { createIdentity, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { MISSING_UUID, createBareIdentity, createProjectOwnedIdentity, createUnprivileged } from "./helpers";

const BASE = {
  kubernetesHost: "https://127.0.0.1:6443",
  allowedNamespaces: "default, ci",
  allowedNames: "",
  allowedAudience: "",
};
const REVIEWER_JWT = "eyJhbGciOiJSUzI1NiJ9.reviewer.signature";

const attachK8s = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const res = expectOk(
    await tenant.admin.kubernetesAuth.attach({ params: { identityId: identity.id }, body: { ...BASE, ...body } }),
  );
  return { identity, k8s: res.identityKubernetesAuth };
};

describe("Kubernetes auth configuration", () => {
  it("attaches, reads with secrets, updates and deletes without them", async () => {
    const tenant = await createTenant();
    const { identity, k8s } = await attachK8s(tenant, {
      tokenReviewerJwt: REVIEWER_JWT,
      caCert: "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----",
    });
    expect(k8s).toMatchObject({
      identityId: identity.id,
      kubernetesHost: BASE.kubernetesHost,
      tokenReviewMode: "api",
      allowedNamespaces: "default, ci",
      allowedNames: "",
      allowedAudience: "",
      gatewayId: null,
      gatewayPoolId: null,
      templateId: null,
      verifyTlsCertificate: true,
      isTokenReviewerJwtTemplateSourced: false,
      tokenReviewerJwt: REVIEWER_JWT,
      accessTokenTTL: 2_592_000,
    });
    const stored = await tenant.app.deps.db
      .selectFrom("identity_kubernetes_auths")
      .select(["encrypted_token_reviewer_jwt", "encrypted_ca_cert"])
      .where("auth_config_id", "=", k8s.id)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_token_reviewer_jwt).toMatch(/^v2:\d+:/);
    expect(JSON.stringify(stored)).not.toContain(REVIEWER_JWT);

    const got = expectOk(
      await tenant.admin.kubernetesAuth.get({ params: { identityId: identity.id } }),
    ).identityKubernetesAuth;
    expect(got).toEqual(k8s);
    const updated = expectOk(
      await tenant.admin.kubernetesAuth.update({
        params: { identityId: identity.id },
        body: {
          tokenReviewerJwt: null,
          allowedNames: "runner",
          kubernetesHost: "localhost:6443",
          accessTokenNumUsesLimit: 5,
        },
      }),
    ).identityKubernetesAuth;
    expect(updated).toMatchObject({
      tokenReviewerJwt: "",
      allowedNames: "runner",
      kubernetesHost: "localhost:6443",
      accessTokenNumUsesLimit: 5,
    });

    const deleted = await tenant.admin.kubernetesAuth.revoke({ params: { identityId: identity.id } });
    expect(deleted.status).toBe(200);
    const body = (deleted.body as { identityKubernetesAuth: Record<string, unknown> }).identityKubernetesAuth;
    expect(body.id).toBe(k8s.id);
    expect(body).not.toHaveProperty("caCert");
    expect(body).not.toHaveProperty("tokenReviewerJwt");
    expect(
      expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } })).identity.authMethods,
    ).toEqual([]);
  });

  it("validates hosts and review modes, and answers the reference's errors", async () => {
    const tenant = await createTenant();
    const { identity } = await attachK8s(tenant);
    const bare = await createBareIdentity(tenant);
    expect(await tenant.admin.kubernetesAuth.attach({ params: { identityId: identity.id }, body: BASE })).toMatchObject(
      {
        status: 400,
        body: { message: "Failed to add Kubernetes Auth to already configured identity" },
      },
    );
    const noHost = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...BASE, kubernetesHost: null },
    });
    expect(noHost).toMatchObject({
      status: 422,
      body: { message: [{ message: "When token review mode is set to API, a Kubernetes host must be provided" }] },
    });
    const noGateway = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...BASE, tokenReviewMode: "gateway" },
    });
    expect(noGateway.status).toBe(422);
    const badChars = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...BASE, kubernetesHost: "https://a b" },
    });
    expect(badChars.status).toBe(422);
    const metadata = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...BASE, kubernetesHost: "http://169.254.169.254" },
    });
    expect(metadata).toMatchObject({ status: 400, body: { message: "Local IPs not allowed as URL" } });
    const gatewayMode = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...BASE, kubernetesHost: null, tokenReviewMode: "gateway", gatewayId: MISSING_UUID },
    });
    expect(gatewayMode).toMatchObject({
      status: 404,
      body: { error: "NotFound", message: `Gateway with ID ${MISSING_UUID} not found` },
    });

    const other = await createBareIdentity(tenant);
    expect(await tenant.admin.kubernetesAuth.get({ params: { identityId: other.id } })).toMatchObject({
      status: 404,
      body: { message: `Failed to find Kubernetes Auth for identity with ID ${other.id}` },
    });
    expect(await tenant.admin.kubernetesAuth.update({ params: { identityId: other.id }, body: {} })).toMatchObject({
      status: 400,
      body: { message: "Failed to update Kubernetes Auth" },
    });
    expect(await tenant.admin.kubernetesAuth.revoke({ params: { identityId: other.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have kubernetes auth" },
    });
    for (const identityId of [MISSING_UUID, "nope"]) {
      expect(await tenant.admin.kubernetesAuth.revoke({ params: { identityId } })).toMatchObject({
        status: 404,
        body: { message: `Failed to find identity with ID ${identityId}` },
      });
    }
    expect(
      (await (await createTenant()).admin.kubernetesAuth.revoke({ params: { identityId: identity.id } })).status,
    ).toBe(404);
    expect((await tenant.anonymous.kubernetesAuth.revoke({ params: { identityId: identity.id } })).status).toBe(401);
    expect(
      (
        await tenant.admin.kubernetesAuth.update({
          params: { identityId: identity.id },
          body: { accessTokenTTL: 10, accessTokenMaxTTL: 5 },
        })
      ).status,
    ).toBe(422);
  });

  it("refuses callers without permission (403), with the role boundary for org identities", async () => {
    const tenant = await createTenant();
    const { identity } = await attachK8s(tenant);
    const outsider = await createUnprivileged(tenant);
    expect(await outsider.client.kubernetesAuth.revoke({ params: { identityId: identity.id } })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to edit on identity" },
    });
    const admin = await createBareIdentity(tenant, "admin");
    expectOk(await tenant.admin.kubernetesAuth.attach({ params: { identityId: admin.id }, body: BASE }));
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    expectOk(await tenant.admin.kubernetesAuth.attach({ params: { identityId: owned.id }, body: BASE }));
    const member = await createUnprivileged(tenant, project.id);
    expect(await member.client.kubernetesAuth.revoke({ params: { identityId: owned.id } })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to revoke-auth on identity" },
    });
    expect((await member.client.kubernetesAuth.update({ params: { identityId: owned.id }, body: {} })).status).toBe(
      403,
    );
  });

  it("checks gateway references: the caller's gateway (404 otherwise), then attach-gateways (403); no pools", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const foreign = await createTokenGateway(other);
    const GATEWAY = { ...BASE, kubernetesHost: null, tokenReviewMode: "gateway" as const };

    const { identity, k8s } = await attachK8s(tenant, { ...GATEWAY, gatewayId: gateway.id });
    expect(k8s).toMatchObject({
      tokenReviewMode: "gateway",
      kubernetesHost: null,
      gatewayId: gateway.id,
      gatewayPoolId: null,
    });
    expect(
      expectOk(await tenant.admin.kubernetesAuth.get({ params: { identityId: identity.id } })).identityKubernetesAuth
        .gatewayId,
    ).toBe(gateway.id);

    const bare = await createBareIdentity(tenant);
    const foreignAttach = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...GATEWAY, gatewayId: foreign.id },
    });
    expect(foreignAttach).toMatchObject({
      status: 404,
      body: { error: "NotFound", message: `Gateway with ID ${foreign.id} not found` },
    });
    const poolAttach = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...GATEWAY, gatewayPoolId: MISSING_UUID },
    });
    expect(poolAttach).toMatchObject({
      status: 404,
      body: { error: "NotFound", message: `Gateway pool with ID ${MISSING_UUID} not found` },
    });
    const bothAttach = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...GATEWAY, gatewayId: gateway.id, gatewayPoolId: MISSING_UUID },
    });
    expect(bothAttach).toMatchObject({
      status: 404,
      body: { message: `Gateway pool with ID ${MISSING_UUID} not found` },
    });
    expect(await tenant.admin.kubernetesAuth.get({ params: { identityId: bare.id } })).toMatchObject({ status: 404 });

    // Update checks only what the body names; null clears without a check.
    const update = (body: Record<string, unknown>) =>
      tenant.admin.kubernetesAuth.update({ params: { identityId: identity.id }, body });
    expect(await update({ gatewayId: foreign.id })).toMatchObject({
      status: 404,
      body: { message: `Gateway with ID ${foreign.id} not found` },
    });
    expect(await update({ gatewayId: MISSING_UUID })).toMatchObject({
      status: 404,
      body: { message: `Gateway with ID ${MISSING_UUID} not found` },
    });
    expect(await update({ gatewayPoolId: MISSING_UUID })).toMatchObject({
      status: 404,
      body: { message: `Gateway pool with ID ${MISSING_UUID} not found` },
    });
    expect(expectOk(await update({ allowedNames: "runner" })).identityKubernetesAuth).toMatchObject({
      gatewayId: gateway.id,
      allowedNames: "runner",
    });
    const second = await createTokenGateway(tenant);
    expect(expectOk(await update({ gatewayId: second.id })).identityKubernetesAuth.gatewayId).toBe(second.id);
    const cleared = expectOk(
      await update({
        tokenReviewMode: "api",
        kubernetesHost: BASE.kubernetesHost,
        gatewayId: null,
        gatewayPoolId: null,
      }),
    );
    expect(cleared.identityKubernetesAuth).toMatchObject({
      tokenReviewMode: "api",
      gatewayId: null,
      gatewayPoolId: null,
    });
  });

  it("needs attach-gateways from a caller who may edit the identity's auth methods", async () => {
    // Org identities need org `identity` create/edit, which only the org admin role (holding
    // attach-gateways too) has; project identities are governed by project permission, so an org
    // `no-access` project member can configure them but cannot attach a gateway.
    const tenant = await createTenant();
    const gateway = await createTokenGateway(tenant);
    const foreign = await createTokenGateway(await createTenant());
    const GATEWAY = { ...BASE, kubernetesHost: null, tokenReviewMode: "gateway" as const };
    const { project, identity: first } = await createProjectOwnedIdentity(tenant);
    const { identity: second } = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "svc-second" } }),
    );
    const noAccess = await createIdentity(tenant, {
      orgRole: "no-access",
      projectId: project.id,
      projectRole: "member",
    });

    const denied = await noAccess.client.kubernetesAuth.attach({
      params: { identityId: first.id },
      body: { ...GATEWAY, gatewayId: gateway.id },
    });
    expect(denied).toMatchObject({
      status: 403,
      body: { error: "PermissionDenied", message: "You are not allowed to attach-gateways on gateway" },
    });
    // Existence is checked first: a missing or foreign gateway is 404 even without the permission.
    for (const gatewayId of [MISSING_UUID, foreign.id]) {
      const missing = await noAccess.client.kubernetesAuth.attach({
        params: { identityId: first.id },
        body: { ...GATEWAY, gatewayId },
      });
      expect(missing).toMatchObject({ status: 404, body: { message: `Gateway with ID ${gatewayId} not found` } });
    }
    expect(
      expectOk(await noAccess.client.kubernetesAuth.attach({ params: { identityId: first.id }, body: BASE }))
        .identityKubernetesAuth.gatewayId,
    ).toBeNull();
    const deniedUpdate = await noAccess.client.kubernetesAuth.update({
      params: { identityId: first.id },
      body: { gatewayId: gateway.id },
    });
    expect(deniedUpdate).toMatchObject({
      status: 403,
      body: { error: "PermissionDenied", message: "You are not allowed to attach-gateways on gateway" },
    });
    expect(
      expectOk(
        await noAccess.client.kubernetesAuth.update({ params: { identityId: first.id }, body: { gatewayId: null } }),
      ).identityKubernetesAuth.gatewayId,
    ).toBeNull();

    // The org member role holds attach-gateways.
    const member = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "member" });
    const attached = expectOk(
      await member.client.kubernetesAuth.attach({
        params: { identityId: second.id },
        body: { ...GATEWAY, gatewayId: gateway.id },
      }),
    );
    expect(attached.identityKubernetesAuth.gatewayId).toBe(gateway.id);
  });
});
