import { describe, expect, it } from "vitest";
import { createTenant, expectOk } from "../helpers/tenant";
import { MISSING_UUID, createBareIdentity, createProjectOwnedIdentity, createUnprivileged } from "./helpers";

describe("GCP auth configuration", () => {
  it("attaches, reads, updates and deletes", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    const attached = expectOk(
      await tenant.admin.gcpAuth.attach({
        params: { identityId: identity.id },
        body: {
          type: "iam",
          allowedServiceAccounts: "a@p.iam.gserviceaccount.com ,b@p.iam.gserviceaccount.com",
          accessTokenPeriod: 0,
        },
      }),
    ).identityGcpAuth;
    expect(attached).toMatchObject({
      identityId: identity.id,
      type: "iam",
      allowedServiceAccounts: "a@p.iam.gserviceaccount.com, b@p.iam.gserviceaccount.com",
      allowedProjects: "",
      allowedZones: "",
      accessTokenPeriod: 0,
      accessTokenTrustedIps: [
        { ipAddress: "0.0.0.0", type: "ipv4", prefix: 0 },
        { ipAddress: "::", type: "ipv6", prefix: 0 },
      ],
    });
    expect(expectOk(await tenant.admin.gcpAuth.get({ params: { identityId: identity.id } })).identityGcpAuth).toEqual(
      attached,
    );
    const updated = expectOk(
      await tenant.admin.gcpAuth.update({
        params: { identityId: identity.id },
        body: { type: "gce", allowedZones: "us-east1-b", accessTokenTrustedIps: [{ ipAddress: "192.168.0.1" }] },
      }),
    ).identityGcpAuth;
    expect(updated).toMatchObject({
      type: "gce",
      allowedZones: "us-east1-b",
      accessTokenTrustedIps: [{ ipAddress: "192.168.0.1", type: "ipv4" }],
    });
    expect(updated.accessTokenTrustedIps[0]).not.toHaveProperty("prefix");
    const deleted = expectOk(
      await tenant.admin.gcpAuth.revoke({ params: { identityId: identity.id } }),
    ).identityGcpAuth;
    expect(deleted).toEqual(updated);
    expect(await tenant.admin.gcpAuth.get({ params: { identityId: identity.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have GCP Auth attached" },
    });
  });

  it("answers the reference's errors", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    expectOk(await tenant.admin.gcpAuth.attach({ params: { identityId: identity.id }, body: { type: "gce" } }));
    expect(
      await tenant.admin.gcpAuth.attach({ params: { identityId: identity.id }, body: { type: "gce" } }),
    ).toMatchObject({
      status: 400,
      body: { message: "Failed to add GCP Auth to already configured identity" },
    });
    const bare = await createBareIdentity(tenant);
    expect(
      (await tenant.admin.gcpAuth.attach({ params: { identityId: bare.id }, body: { type: "aws" } } as never)).status,
    ).toBe(422);
    expect(
      (
        await tenant.admin.gcpAuth.attach({
          params: { identityId: bare.id },
          body: { type: "iam", accessTokenTTL: 100, accessTokenMaxTTL: 0 },
        })
      ).status,
    ).toBe(422);
    expect(
      await tenant.admin.gcpAuth.attach({
        params: { identityId: bare.id },
        body: { type: "iam", accessTokenTrustedIps: [{ ipAddress: "1.2.3.4/40" }] },
      }),
    ).toMatchObject({
      status: 400,
      body: { message: "The IP is not a valid IPv4, IPv6, or CIDR block" },
    });
    expect(await tenant.admin.gcpAuth.update({ params: { identityId: bare.id }, body: {} })).toMatchObject({
      status: 400,
      body: { message: "Failed to update GCP Auth" },
    });
    expect(
      await tenant.admin.gcpAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 3_000_000 } }),
    ).toMatchObject({
      status: 400,
      body: { message: "Access token TTL cannot be greater than max TTL" },
    });
    expect(await tenant.admin.gcpAuth.revoke({ params: { identityId: bare.id } })).toMatchObject({
      status: 400,
      body: { message: "The identity does not have gcp auth" },
    });
    for (const identityId of [MISSING_UUID, "bad"])
      expect((await tenant.admin.gcpAuth.get({ params: { identityId } })).status).toBe(404);
    expect((await (await createTenant()).admin.gcpAuth.get({ params: { identityId: identity.id } })).status).toBe(404);
    expect((await tenant.anonymous.gcpAuth.get({ params: { identityId: identity.id } })).status).toBe(401);
  });

  it("refuses callers without permission (403)", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    expectOk(await tenant.admin.gcpAuth.attach({ params: { identityId: identity.id }, body: { type: "iam" } }));
    const outsider = await createUnprivileged(tenant);
    expect(await outsider.client.gcpAuth.get({ params: { identityId: identity.id } })).toMatchObject({
      status: 403,
      body: { error: "PermissionDenied" },
    });
    expect((await outsider.client.gcpAuth.update({ params: { identityId: identity.id }, body: {} })).status).toBe(403);
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    const member = await createUnprivileged(tenant, project.id);
    expect(
      (await member.client.gcpAuth.attach({ params: { identityId: owned.id }, body: { type: "iam" } })).status,
    ).toBe(403);
    const viewer = await (
      await import("../helpers/tenant")
    ).createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expectOk(await tenant.admin.gcpAuth.attach({ params: { identityId: owned.id }, body: { type: "iam" } }));
    expect((await viewer.client.gcpAuth.get({ params: { identityId: owned.id } })).status).toBe(200);
    expect((await viewer.client.gcpAuth.revoke({ params: { identityId: owned.id } })).status).toBe(403);
  });
});
