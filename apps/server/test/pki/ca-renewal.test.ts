import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import {
  createApiProfile,
  createCustomRole,
  createIntermediateCa,
  ensureOpenssl,
  openssl,
  setupCaProject,
  verifyChain,
  expectIssued,
} from "./pki-helpers";

beforeAll(() => ensureOpenssl());

const inYears = (years: number) => new Date(Date.now() + years * 365 * 24 * 3600 * 1000).toISOString();
const serialOf = (pem: string) =>
  openssl(["x509", "-noout", "-serial", "-in", "{c}"], { c: pem }).output.trim().replace("serial=", "");

describe("POST /api/v1/cert-manager/ca/internal/:caId/renew", () => {
  it("gives the CA a new certificate over the same key; both verify old certificates and one CRL", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const before = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    const leaf = expectIssued(
      await tenant.admin.certificates.issue({ body: { profileId: profile.id, commonName: "old.example.com" } }),
    );

    const renewed = expectOk(
      await tenant.admin.certificateAuthorities.renew({
        params: { caId: ca.id },
        body: { type: "existing", notAfter: inYears(20) },
      }),
    );
    expect(renewed.serialNumber).not.toBe(before.serialNumber);
    expect(renewed.certId).toMatch(/^[0-9a-f-]{36}$/);
    const pubkey = (pem: string) => openssl(["x509", "-noout", "-pubkey", "-in", "{c}"], { c: pem }).output;
    expect(pubkey(renewed.certificate)).toBe(pubkey(before.certificate));
    const current = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    expect(current.certificate).toBe(renewed.certificate);
    const fetched = expectOk(await tenant.admin.certificateAuthorities.get({ params: { caId: ca.id } }));
    expect(fetched.certificateAuthority.configuration.serialNumber).toBe(renewed.serialNumber);

    const versions = expectOk(
      await tenant.admin.certificateAuthorities.listCaCertificates({ params: { caId: ca.id } }),
    );
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect(versions.map((v) => v.certificate)).toEqual([before.certificate, renewed.certificate]);

    expect(verifyChain(leaf.certificate, before.certificate).ok).toBe(true);
    expect(verifyChain(leaf.certificate, renewed.certificate).ok).toBe(true);
    expectOk(await tenant.admin.certificates.revoke({ params: { certificateId: leaf.certificateId }, body: {} }));
    const { crl } = expectOk(await tenant.admin.certificateAuthorities.getCrl({ params: { caId: ca.id } }));
    for (const root of [before.certificate, renewed.certificate]) {
      expect(verifyChain(leaf.certificate, root, "", ["-crl_check"], crl).output).toContain("certificate revoked");
    }
  });

  it("keeps an intermediate within its parent, and answers 400, 422, 401, 404 and 403", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const issuing = await createIntermediateCa(tenant, project.id, ca.id);
    const beyond = await tenant.admin.certificateAuthorities.renew({
      params: { caId: issuing.id },
      body: { type: "existing", notAfter: inYears(50) },
    });
    expect(beyond.status).toBe(400);
    const within = expectOk(
      await tenant.admin.certificateAuthorities.renew({
        params: { caId: issuing.id },
        body: { type: "existing", notAfter: inYears(2) },
      }),
    );
    const root = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    expect(verifyChain(within.certificate, root.certificate).ok).toBe(true);
    const rootRenewed = expectOk(
      await tenant.admin.certificateAuthorities.renew({
        params: { caId: ca.id },
        body: { type: "existing", notAfter: inYears(30) },
      }),
    );
    const issuingNow = expectOk(
      await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: issuing.id } }),
    );
    expect(issuingNow.certificateChain.trim()).toBe(rootRenewed.certificate.trim());
    expect(verifyChain(issuingNow.certificate, rootRenewed.certificate).ok).toBe(true);
    const past = await tenant.admin.certificateAuthorities.renew({
      params: { caId: ca.id },
      body: { type: "existing", notAfter: "2001-01-01T00:00:00Z" },
    });
    expect(past.status).toBe(400);
    const body = { type: "existing" as const, notAfter: inYears(1) };
    expect(
      (await tenant.admin.certificateAuthorities.renew({ params: { caId: ca.id }, body: { type: "new" } as never }))
        .status,
    ).toBe(422);
    expect((await tenant.anonymous.certificateAuthorities.renew({ params: { caId: ca.id }, body })).status).toBe(401);
    const other = await createTenant();
    expect((await other.admin.certificateAuthorities.renew({ params: { caId: ca.id }, body })).status).toBe(404);
    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificate-authorities", action: ["read", "edit"], inverted: false },
    ]);
    const editor = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect((await editor.client.certificateAuthorities.renew({ params: { caId: ca.id }, body })).status).toBe(403);
    expect((await editor.client.certificateAuthorities.listCaCertificates({ params: { caId: ca.id } })).status).toBe(
      200,
    );
  });
});

describe("DELETE /api/v1/cert-manager/ca/internal/:caId and CRLs", () => {
  it("revokes a deleted intermediate in its parent's CRL, so what it issued stays untrusted", async () => {
    const { tenant, project, ca } = await setupCaProject();
    const issuing = await createIntermediateCa(tenant, project.id, ca.id);
    const profile = await createApiProfile(tenant, project.id, issuing.id);
    const leaf = expectIssued(
      await tenant.admin.certificates.issue({ body: { profileId: profile.id, commonName: "orphan.example.com" } }),
    );
    const issuingPem = expectOk(
      await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: issuing.id } }),
    );
    expectOk(await tenant.admin.certificateProfiles.delete({ params: { profileId: profile.id } }));
    expectOk(await tenant.admin.certificateAuthorities.delete({ params: { caId: issuing.id } }));

    const { crl } = expectOk(await tenant.admin.certificateAuthorities.getCrl({ params: { caId: ca.id } }));
    const listed = openssl(["crl", "-noout", "-text", "-in", "{crl}"], { crl }).output;
    expect(listed).toContain(serialOf(issuingPem.certificate));
    expect(listed).toContain("Cessation Of Operation");
    const root = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    expect(verifyChain(leaf.certificate, root.certificate, issuingPem.certificate).ok).toBe(true);
    const check = verifyChain(issuingPem.certificate, root.certificate, "", ["-crl_check"], crl);
    expect(check.output).toContain("certificate revoked");
  });
});
