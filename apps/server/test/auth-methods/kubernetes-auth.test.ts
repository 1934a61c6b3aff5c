import { describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { MISSING_UUID, createBareIdentity, createProjectOwnedIdentity, createUnprivileged } from "./helpers";

const BASE = { kubernetesHost: "https://127.0.0.1:6443", allowedNamespaces: "default, ci", allowedNames: "", allowedAudience: "" };
const REVIEWER_JWT = "eyJhbGciOiJSUzI1NiJ9.reviewer.signature";

const attachK8s = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const res = expectOk(await tenant.admin.kubernetesAuth.attach({ params: { identityId: identity.id }, body: { ...BASE, ...body } }));
  return { identity, k8s: res.identityKubernetesAuth };
};

describe("Kubernetes auth configuration", () => {
  it("attaches, reads with secrets, updates and deletes without them", async () => {
    const tenant = await createTenant();
    const { identity, k8s } = await attachK8s(tenant, { tokenReviewerJwt: REVIEWER_JWT, caCert: "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----" });
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
    expect(stored.encrypted_token_reviewer_jwt).toMatch(/^v1:/);
    expect(JSON.stringify(stored)).not.toContain(REVIEWER_JWT);

    const got = expectOk(await tenant.admin.kubernetesAuth.get({ params: { identityId: identity.id } })).identityKubernetesAuth;
    expect(got).toEqual(k8s);
    const updated = expectOk(
      await tenant.admin.kubernetesAuth.update({
        params: { identityId: identity.id },
        body: { tokenReviewerJwt: null, allowedNames: "runner", kubernetesHost: "localhost:6443", accessTokenNumUsesLimit: 5 },
      }),
    ).identityKubernetesAuth;
    expect(updated).toMatchObject({ tokenReviewerJwt: "", allowedNames: "runner", kubernetesHost: "localhost:6443", accessTokenNumUsesLimit: 5 });

    const deleted = await tenant.admin.kubernetesAuth.revoke({ params: { identityId: identity.id } });
    expect(deleted.status).toBe(200);
    const body = (deleted.body as { identityKubernetesAuth: Record<string, unknown> }).identityKubernetesAuth;
    expect(body.id).toBe(k8s.id);
    expect(body).not.toHaveProperty("caCert");
    expect(body).not.toHaveProperty("tokenReviewerJwt");
    expect(expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } })).identity.authMethods).toEqual([]);
  });

  it("validates hosts and review modes, and answers the reference's errors", async () => {
    const tenant = await createTenant();
    const { identity } = await attachK8s(tenant);
    const bare = await createBareIdentity(tenant);
    expect(await tenant.admin.kubernetesAuth.attach({ params: { identityId: identity.id }, body: BASE })).toMatchObject({
      status: 400,
      body: { message: "Failed to add Kubernetes Auth to already configured identity" },
    });
    const noHost = await tenant.admin.kubernetesAuth.attach({ params: { identityId: bare.id }, body: { ...BASE, kubernetesHost: null } });
    expect(noHost).toMatchObject({ status: 422, body: { message: [{ message: "When token review mode is set to API, a Kubernetes host must be provided" }] } });
    const noGateway = await tenant.admin.kubernetesAuth.attach({ params: { identityId: bare.id }, body: { ...BASE, tokenReviewMode: "gateway" } });
    expect(noGateway.status).toBe(422);
    const badChars = await tenant.admin.kubernetesAuth.attach({ params: { identityId: bare.id }, body: { ...BASE, kubernetesHost: "https://a b" } });
    expect(badChars.status).toBe(422);
    const metadata = await tenant.admin.kubernetesAuth.attach({ params: { identityId: bare.id }, body: { ...BASE, kubernetesHost: "http://169.254.169.254" } });
    expect(metadata).toMatchObject({ status: 400, body: { message: "Local IPs not allowed as URL" } });
    const gatewayMode = await tenant.admin.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...BASE, kubernetesHost: null, tokenReviewMode: "gateway", gatewayId: MISSING_UUID },
    });
    expect(gatewayMode.status).toBe(200);

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
    expect((await (await createTenant()).admin.kubernetesAuth.revoke({ params: { identityId: identity.id } })).status).toBe(404);
    expect((await tenant.anonymous.kubernetesAuth.revoke({ params: { identityId: identity.id } })).status).toBe(401);
    expect(
      (await tenant.admin.kubernetesAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 10, accessTokenMaxTTL: 5 } })).status,
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
    expect((await member.client.kubernetesAuth.update({ params: { identityId: owned.id }, body: {} })).status).toBe(403);
  });
});
