import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import {
  createApiProfile,
  createCertProject,
  createCustomRole,
  createProfileRaw,
  createRootCa,
  setupCaProject,
} from "./pki-helpers";

const setup = setupCaProject;
const create = createProfileRaw;

describe("GET, PATCH and DELETE /api/v1/cert-manager/certificate-profiles/:profileId", () => {
  it("gets, updates and deletes, returning the deleted profile", async () => {
    const { tenant, project, ca } = await setup();
    const profile = await createApiProfile(tenant, project.id, ca.id, { defaults: { ttlDays: 10 } });
    expect(
      expectOk(await tenant.admin.certificateProfiles.get({ params: { profileId: profile.id } })).certificateProfile,
    ).toEqual(profile);
    const updated = expectOk(
      await tenant.admin.certificateProfiles.update({
        params: { profileId: profile.id },
        body: {
          slug: "renamed",
          description: "now described",
          defaults: { ttlDays: 20 },
          apiConfig: { autoRenew: true, renewBeforeDays: 5, storePrivateKey: true },
        },
      }),
    ).certificateProfile;
    expect(updated).toMatchObject({
      slug: "renamed",
      description: "now described",
      defaults: { ttlDays: 20 },
      apiConfig: { id: profile.apiConfigId, autoRenew: true, renewBeforeDays: 5, storePrivateKey: true },
    });
    const cleared = expectOk(
      await tenant.admin.certificateProfiles.update({
        params: { profileId: profile.id },
        body: { description: null, defaults: null },
      }),
    );
    expect(cleared.certificateProfile).toMatchObject({ description: null, defaults: null, slug: "renamed" });
    const cert = expectOk(
      await tenant.admin.certificates.issue({
        body: { profileId: profile.id, commonName: "kept.example.com", keyAlgorithm: "EC_prime256v1" },
      }),
    );
    const deleted = expectOk(await tenant.admin.certificateProfiles.delete({ params: { profileId: profile.id } }));
    const kept = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: cert.certificateId } }),
    ).certificate;
    expect(kept).toMatchObject({ profileId: null, caId: ca.id, status: "active" });
    expect(deleted.certificateProfile).toMatchObject({ id: profile.id, slug: "renamed" });
    expect((await tenant.admin.certificateProfiles.get({ params: { profileId: profile.id } })).status).toBe(404);
  });

  it("keeps stored secrets across updates that leave them out", async () => {
    const { tenant, project, ca } = await setup();
    const est = expectOk(
      await create(tenant, {
        projectId: project.id,
        caId: ca.id,
        slug: "est",
        enrollmentType: "est",
        estConfig: { passphrase: "first", disableBootstrapCaValidation: true },
      }),
    ).certificateProfile;
    const before = await tenant.app.deps.db
      .selectFrom("pki_enrollment_configs")
      .select("encrypted_secret")
      .where("profile_id", "=", est.id)
      .executeTakeFirstOrThrow();
    expectOk(
      await tenant.admin.certificateProfiles.update({
        params: { profileId: est.id },
        body: { estConfig: { disableBootstrapCaValidation: true } },
      }),
    );
    const after = await tenant.app.deps.db
      .selectFrom("pki_enrollment_configs")
      .select("encrypted_secret")
      .where("profile_id", "=", est.id)
      .executeTakeFirstOrThrow();
    expect(after.encrypted_secret).toBe(before.encrypted_secret);
  });

  it("answers 401, 422, 404, 400 and 403", async () => {
    const { tenant, project, ca } = await setup();
    const other = await createTenant();
    const otherProject = await createCertProject(other);
    const otherProfile = await createApiProfile(
      other,
      otherProject.id,
      (await createRootCa(other, otherProject.id)).id,
    );
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const second = await createApiProfile(tenant, project.id, ca.id);
    const params = { profileId: profile.id };
    expect((await tenant.anonymous.certificateProfiles.get({ params })).status).toBe(401);
    expect((await tenant.anonymous.certificateProfiles.update({ params, body: {} })).status).toBe(401);
    expect((await tenant.anonymous.certificateProfiles.delete({ params })).status).toBe(401);
    expect((await tenant.admin.certificateProfiles.update({ params, body: { slug: "Bad Slug" } })).status).toBe(422);
    expect(
      (await tenant.admin.certificateProfiles.update({ params, body: { defaults: { ttlDays: -1 } } })).status,
    ).toBe(422);
    for (const profileId of ["nope", randomUUID(), otherProfile.id]) {
      const res = await tenant.admin.certificateProfiles.get({ params: { profileId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Certificate profile with ID '${profileId}' not found` });
      expect((await tenant.admin.certificateProfiles.update({ params: { profileId }, body: {} })).status).toBe(404);
      expect((await tenant.admin.certificateProfiles.delete({ params: { profileId } })).status).toBe(404);
    }
    const taken = await tenant.admin.certificateProfiles.update({ params, body: { slug: second.slug } });
    expect(taken.status).toBe(400);
    const wrongConfig = await tenant.admin.certificateProfiles.update({
      params,
      body: { acmeConfig: { skipEabBinding: true } },
    });
    expect(wrongConfig.status).toBe(400);
    expect(wrongConfig.body).toMatchObject({
      message: "ACME configuration cannot be set on a profile with api enrollment",
    });
    const badSig = await tenant.admin.certificateProfiles.update({
      params,
      body: { defaults: { signatureAlgorithm: "RSA-SHA512" } },
    });
    expect(badSig.status).toBe(400);

    const noAccess = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await noAccess.client.certificateProfiles.get({ params })).status).toBe(403);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.certificateProfiles.get({ params })).status).toBe(200);
    const denyEdit = await viewer.client.certificateProfiles.update({ params, body: { description: "x" } });
    expect(denyEdit.status).toBe(403);
    expect(denyEdit.body).toMatchObject({ message: "You are not allowed to edit on certificate-profiles" });
    expect((await viewer.client.certificateProfiles.delete({ params })).status).toBe(403);
    const role = await createCustomRole(tenant, project.id, [
      {
        subject: "certificate-profiles",
        action: ["read", "edit"],
        inverted: false,
        conditions: { slug: profile.slug },
      },
    ]);
    const scoped = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect((await scoped.client.certificateProfiles.get({ params: { profileId: second.id } })).status).toBe(403);
    const rename = await scoped.client.certificateProfiles.update({ params, body: { slug: uniqueName("elsewhere") } });
    expect(rename.status).toBe(403);
  });
});
