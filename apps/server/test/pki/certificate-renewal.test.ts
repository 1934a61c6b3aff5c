import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { runAutoRenewPass } from "../../src/modules/pki/certificate-auto-renew";
import { auditEvents } from "../audit/helpers";
import { createIdentity, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import {
  createApiProfile,
  createCertProject,
  createCustomRole,
  ensureOpenssl,
  makeCsr,
  openssl,
  setupCaProject,
  verifyChain,
  expectIssued,
} from "./pki-helpers";

beforeAll(() => ensureOpenssl());

const DAY_MS = 24 * 3600 * 1000;

const issue = async (tenant: Tenant, profileId: string, ttl = "30d") =>
  expectIssued(
    await tenant.admin.certificates.issue({
      body: {
        profileId,
        commonName: "app.example.com",
        altNames: "app.example.com, 10.0.0.7",
        ttl,
        keyAlgorithm: "EC_prime256v1",
      },
    }),
  );

const publicKeyOf = (pem: string) => openssl(["x509", "-noout", "-pubkey", "-in", "{cert}"], { cert: pem }).output;

describe("POST /api/v1/cert-manager/certificates/:certificateId/renew", () => {
  it("issues the same subject and names with a new key, linked both ways, once", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const profile = await createApiProfile(tenant, project.id, ca.id, { apiConfig: { storePrivateKey: true } });
    const old = await issue(tenant, profile.id);
    const renewed = expectOk(
      await tenant.admin.certificates.renew({ params: { certificateId: old.certificateId }, body: {} }),
    );
    expect(renewed.serialNumber).not.toBe(old.serialNumber);
    expect(renewed.privateKey).toMatch(/PRIVATE KEY/);
    expect(publicKeyOf(renewed.certificate)).not.toBe(publicKeyOf(old.certificate));
    const root = renewed.certificateChain;
    expect(verifyChain(renewed.certificate, root).ok).toBe(true);
    const text = openssl(["x509", "-noout", "-subject", "-ext", "subjectAltName", "-in", "{c}"], {
      c: renewed.certificate,
    }).output;
    expect(text).toContain("CN = app.example.com");
    expect(text).toContain("IP Address:10.0.0.7");

    const oldRow = expectOk(await tenant.admin.certificates.get({ params: { certificateId: old.certificateId } }));
    const newRow = expectOk(await tenant.admin.certificates.get({ params: { certificateId: renewed.certificateId } }));
    expect(oldRow.certificate).toMatchObject({
      renewedByCertificateId: renewed.certificateId,
      renewalStatus: "renewed",
    });
    expect(newRow.certificate).toMatchObject({ renewedFromCertificateId: old.certificateId, hasPrivateKey: true });

    const again = await tenant.admin.certificates.renew({ params: { certificateId: old.certificateId }, body: {} });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "The certificate has already been renewed" });

    const withoutRoot = expectOk(
      await tenant.admin.certificates.renew({
        params: { certificateId: renewed.certificateId },
        body: { removeRootsFromChain: true },
      }),
    );
    expect(withoutRoot.certificateChain).toBe("");
  });

  it("renews over the key of a CSR, and refuses revoked certificates and bad CSRs", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const old = await issue(tenant, profile.id);
    const { csr } = makeCsr("/CN=ignored.example.com");
    const renewed = expectOk(
      await tenant.admin.certificates.renew({ params: { certificateId: old.certificateId }, body: { csr } }),
    );
    expect(renewed.privateKey).toBeUndefined();
    expect(publicKeyOf(renewed.certificate)).toBe(
      openssl(["req", "-noout", "-pubkey", "-in", "{csr}"], { csr }).output,
    );
    expect(openssl(["x509", "-noout", "-subject", "-in", "{c}"], { c: renewed.certificate }).output).toContain(
      "app.example.com",
    );
    const bad = await tenant.admin.certificates.renew({
      params: { certificateId: renewed.certificateId },
      body: { csr: "not a csr" },
    });
    expect(bad.status).toBe(400);
    expectOk(await tenant.admin.certificates.revoke({ params: { certificateId: renewed.certificateId }, body: {} }));
    const revoked = await tenant.admin.certificates.renew({
      params: { certificateId: renewed.certificateId },
      body: {},
    });
    expect(revoked.status).toBe(400);
    expect(revoked.body).toMatchObject({ message: "A revoked certificate cannot be renewed" });
  });

  it("answers 401, 422, 404 and 403", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const old = await issue(tenant, profile.id);
    const params = { certificateId: old.certificateId };
    expect((await tenant.anonymous.certificates.renew({ params, body: {} })).status).toBe(401);
    expect((await tenant.admin.certificates.renew({ params, body: { csr: 5 } as never })).status).toBe(422);
    expect((await tenant.admin.certificates.renew({ params: { certificateId: randomUUID() }, body: {} })).status).toBe(
      404,
    );
    const other = await createTenant();
    expect((await other.admin.certificates.renew({ params, body: {} })).status).toBe(404);
    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificates", action: ["read"], inverted: false },
      { subject: "certificate-profiles", action: ["read"], inverted: false },
    ]);
    const reader = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect((await reader.client.certificates.renew({ params, body: {} })).status).toBe(403);
  });
});

describe("GET /api/v1/cert-manager/certificates/:certificateId/bundle", () => {
  it("returns the certificate, chain and stored key, null without one, 403 without read-private-key", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const keeping = await createApiProfile(tenant, project.id, ca.id, { apiConfig: { storePrivateKey: true } });
    const plain = await createApiProfile(tenant, project.id, ca.id);
    const kept = await issue(tenant, keeping.id);
    const notKept = await issue(tenant, plain.id);
    const bundle = expectOk(
      await tenant.admin.certificates.getKeyBundle({ params: { certificateId: kept.certificateId } }),
    );
    expect(bundle).toEqual({
      certificate: kept.certificate,
      certificateChain: kept.certificateChain,
      privateKey: kept.privateKey,
      serialNumber: kept.serialNumber,
    });
    const none = expectOk(
      await tenant.admin.certificates.getKeyBundle({ params: { certificateId: notKept.certificateId } }),
    );
    expect(none.privateKey).toBeNull();
    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificates", action: ["read"], inverted: false },
    ]);
    const reader = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect(
      (await reader.client.certificates.getKeyBundle({ params: { certificateId: kept.certificateId } })).status,
    ).toBe(403);
    expect(
      (await tenant.anonymous.certificates.getKeyBundle({ params: { certificateId: kept.certificateId } })).status,
    ).toBe(401);
    const other = await createTenant();
    expect(
      (await other.admin.certificates.getKeyBundle({ params: { certificateId: kept.certificateId } })).status,
    ).toBe(404);
  });
});

describe("GET /api/v1/cert-manager/certificate-profiles/slug/:slug", () => {
  it("finds a profile of the project by slug; 404 for unknown slugs and other tenants, 403 without read", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const found = expectOk(
      await tenant.admin.certificateProfiles.getBySlug({
        params: { slug: profile.slug },
        query: { projectId: project.id },
      }),
    );
    expect(found.certificateProfile).toMatchObject({ id: profile.id, slug: profile.slug });
    const unknown = await tenant.admin.certificateProfiles.getBySlug({
      params: { slug: "no-such-profile" },
      query: { projectId: project.id },
    });
    expect(unknown.status).toBe(404);
    const other = await createTenant();
    const otherProject = await createCertProject(other);
    expect(
      (
        await other.admin.certificateProfiles.getBySlug({
          params: { slug: profile.slug },
          query: { projectId: project.id },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await other.admin.certificateProfiles.getBySlug({
          params: { slug: profile.slug },
          query: { projectId: otherProject.id },
        })
      ).status,
    ).toBe(404);
    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificates", action: ["read"], inverted: false },
    ]);
    const reader = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect(
      (
        await reader.client.certificateProfiles.getBySlug({
          params: { slug: profile.slug },
          query: { projectId: project.id },
        })
      ).status,
    ).toBe(403);
  });
});

describe("automatic renewal (apiConfig.autoRenew)", () => {
  it("renews certificates inside their window once, keeping the holder's key when Keyward has none", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const auto = await createApiProfile(tenant, project.id, ca.id, {
      apiConfig: { autoRenew: true, renewBeforeDays: 5 },
    });
    const manual = await createApiProfile(tenant, project.id, ca.id);
    const due = await issue(tenant, auto.id, "10d");
    const notDue = await issue(tenant, auto.id, "30d");
    const untouched = await issue(tenant, manual.id, "10d");
    const { deps } = tenant.app;

    const at = new Date(Date.now() + 6 * DAY_MS);
    await Promise.all([runAutoRenewPass(deps, at), runAutoRenewPass(deps, at)]);
    const get = async (id: string) =>
      expectOk(await tenant.admin.certificates.get({ params: { certificateId: id } })).certificate;
    const renewedFrom = await get(due.certificateId);
    expect(renewedFrom).toMatchObject({ renewalStatus: "renewed" });
    expect((await get(notDue.certificateId)).renewedByCertificateId).toBeNull();
    expect((await get(untouched.certificateId)).renewedByCertificateId).toBeNull();
    const successor = expectOk(
      await tenant.admin.certificates.getKeyBundle({ params: { certificateId: renewedFrom.renewedByCertificateId! } }),
    );
    expect(publicKeyOf(successor.certificate)).toBe(publicKeyOf(due.certificate));
    const { certificates } = expectOk(
      await tenant.admin.certificates.list({ query: { projectId: project.id, profileId: auto.id } }),
    );
    expect(certificates).toHaveLength(3);
    // The renewal is on record once, as a change the platform made in the certificate's project.
    const renewals = await auditEvents(tenant, { projectId: project.id, eventType: "automated-renew-certificate" });
    expect(renewals).toHaveLength(1);
    expect(renewals[0]).toMatchObject({
      actor: { type: "platform" },
      event: { metadata: { certificateId: due.certificateId, profileId: auto.id } },
    });
    // Today nothing of this profile is due: the successor starts a fresh 10-day life.
    await runAutoRenewPass(deps);
    const again = expectOk(
      await tenant.admin.certificates.list({ query: { projectId: project.id, profileId: auto.id } }),
    );
    expect(again.totalCount).toBe(3);
  });

  it("records a failure on the certificate and backs off before trying again", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const auto = await createApiProfile(tenant, project.id, ca.id, {
      apiConfig: { autoRenew: true, renewBeforeDays: 5, storePrivateKey: true },
    });
    const due = await issue(tenant, auto.id, "4d");
    expectOk(
      await tenant.admin.certificateAuthorities.update({ params: { caId: ca.id }, body: { status: "disabled" } }),
    );
    const { deps } = tenant.app;
    const attempts = async () =>
      (
        await deps.db
          .selectFrom("pki_certificates")
          .select("renewal_attempts")
          .where("id", "=", due.certificateId)
          .executeTakeFirstOrThrow()
      ).renewal_attempts;
    // Half of the 4-day lifetime caps the 5-day window: due after two days.
    await runAutoRenewPass(deps, new Date(Date.now() + DAY_MS));
    expect(await attempts()).toBe(0);
    const at = new Date(Date.now() + 2.5 * DAY_MS);
    await runAutoRenewPass(deps, at);
    const failed = expectOk(await tenant.admin.certificates.get({ params: { certificateId: due.certificateId } }));
    expect(failed.certificate).toMatchObject({ renewalStatus: "failed", renewedByCertificateId: null });
    expect(failed.certificate.renewalError).toContain("disabled");
    expect(await attempts()).toBe(1);
    await runAutoRenewPass(deps, at);
    expect(await attempts()).toBe(1);

    expectOk(await tenant.admin.certificateAuthorities.update({ params: { caId: ca.id }, body: { status: "active" } }));
    await runAutoRenewPass(deps, new Date(at.getTime() + 3 * 60_000));
    const renewed = expectOk(await tenant.admin.certificates.get({ params: { certificateId: due.certificateId } }));
    expect(renewed.certificate).toMatchObject({ renewalStatus: "renewed", renewalError: null });
    const successor = expectOk(
      await tenant.admin.certificates.getKeyBundle({
        params: { certificateId: renewed.certificate.renewedByCertificateId! },
      }),
    );
    expect(successor.privateKey).toMatch(/PRIVATE KEY/);
    expect(publicKeyOf(successor.certificate)).not.toBe(publicKeyOf(due.certificate));
  });
});
