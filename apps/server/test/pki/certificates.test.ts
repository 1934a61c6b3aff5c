import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, expectOk, type Tenant } from "../helpers/tenant";
import {
  createApiProfile,
  createRootCa,
  describeCertificate,
  issuingHierarchy,
  ensureOpenssl,
  makeCsr,
  openssl,
  verifyChain,
  expectIssued,
} from "./pki-helpers";

beforeAll(() => ensureOpenssl());

const issue = (tenant: Tenant, body: Record<string, unknown>) =>
  tenant.admin.certificates.issue({ body: body as never });

describe("POST /api/v1/cert-manager/certificates", () => {
  it("issues a certificate with a generated key that verifies against the CA chain", async () => {
    const { tenant, project, issuing, profile, rootPem } = await issuingHierarchy({
      defaults: {
        ttlDays: 60,
        organization: "Keyward",
        extendedKeyUsages: ["server_auth"],
        subjectAltNames: [{ type: "dns_name", value: "default.example.com" }],
      },
    });
    const issued = expectIssued(
      await issue(tenant, {
        profileId: profile.id,
        commonName: "api.example.com",
        altNames: "api.example.com, 10.0.0.7, ops@example.com",
        ttl: "30d",
      }),
    );
    expect(issued.privateKey).toContain("BEGIN PRIVATE KEY");
    expect(issued.issuingCaCertificate).toBe(
      expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: issuing.id } })).certificate,
    );
    const verified = verifyChain(issued.certificate, rootPem, issued.certificateChain, ["-purpose", "sslserver"]);
    expect(verified.output).toContain(": OK");
    const text = describeCertificate(issued.certificate);
    expect(text).toContain("CN = api.example.com");
    expect(text).toContain("O = Keyward");
    expect(text).toMatch(
      /DNS:api\.example\.com, IP Address:10\.0\.0\.7, email:ops@example\.com, DNS:default\.example\.com/,
    );
    expect(text).toContain("TLS Web Server Authentication");
    expect(text).toContain("CA:FALSE");
    const keyMatches = openssl(["pkey", "-in", "{key}", "-pubout"], { key: issued.privateKey! }).output;
    expect(openssl(["x509", "-in", "{cert}", "-noout", "-pubkey"], { cert: issued.certificate }).output).toBe(
      keyMatches,
    );

    const record = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: issued.certificateId } }),
    ).certificate;
    expect(record).toMatchObject({
      projectId: project.id,
      caId: issuing.id,
      profileId: profile.id,
      status: "active",
      serialNumber: issued.serialNumber,
      commonName: "api.example.com",
      altNames: "api.example.com,10.0.0.7,ops@example.com,default.example.com",
      friendlyName: "api.example.com",
      keyAlgorithm: "RSA_2048",
      signatureAlgorithm: "ECDSA-SHA256",
      keyUsages: ["digital_signature", "key_encipherment"],
      extendedKeyUsages: ["server_auth"],
      revokedAt: null,
      hasPrivateKey: false,
    });
    const days = (new Date(record.notAfter).getTime() - new Date(record.notBefore).getTime()) / 86_400_000;
    expect(Math.round(days)).toBe(30);
    expect(
      openssl(["x509", "-in", "{cert}", "-noout", "-serial"], { cert: issued.certificate }).output.toLowerCase(),
    ).toContain(issued.serialNumber);
    const bundle = expectOk(
      await tenant.admin.certificates.getBundle({ params: { certificateId: issued.certificateId } }),
    );
    expect(bundle).toEqual({
      certificate: issued.certificate,
      certificateChain: issued.certificateChain,
      serialNumber: issued.serialNumber,
    });
    const noKey = await tenant.admin.certificates.getPrivateKey({ params: { certificateId: issued.certificateId } });
    expect(noKey.status).toBe(404);
  });

  it("signs CSRs, issues self-signed certificates and keeps keys only when the profile says so", async () => {
    const { tenant, project, profile, rootPem } = await issuingHierarchy();
    const { csr } = makeCsr("/CN=from-csr.example.com/O=Requester");
    const signed = expectIssued(await issue(tenant, { profileId: profile.id, csr, altNames: "from-csr.example.com" }));
    expect(signed.privateKey).toBeUndefined();
    expect(verifyChain(signed.certificate, rootPem, signed.certificateChain).output).toContain(": OK");
    const record = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: signed.certificateId } }),
    ).certificate;
    expect(record).toMatchObject({ commonName: "from-csr.example.com", keyAlgorithm: "EC_prime256v1" });
    const rsaCsr = makeCsr("/CN=rsa.example.com", ["-newkey", "rsa:3072"]);
    expect(expectIssued(await issue(tenant, { profileId: profile.id, csr: rsaCsr.csr })).privateKey).toBeUndefined();

    const selfProfile = expectOk(
      await tenant.admin.certificateProfiles.create({
        body: {
          projectId: project.id,
          slug: "self-signed",
          enrollmentType: "api",
          issuerType: "self-signed",
          defaults: { keyAlgorithm: "EC_secp384r1", ttlDays: 7 },
          apiConfig: { storePrivateKey: true },
        },
      }),
    ).certificateProfile;
    const self = expectIssued(await issue(tenant, { profileId: selfProfile.id, commonName: "self.example.com" }));
    expect(self.issuingCaCertificate).toBe(self.certificate);
    expect(verifyChain(self.certificate, self.certificate).output).toContain(": OK");
    const selfRecord = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: self.certificateId } }),
    ).certificate;
    expect(selfRecord).toMatchObject({
      caId: null,
      keyAlgorithm: "EC_secp384r1",
      signatureAlgorithm: "ECDSA-SHA384",
      hasPrivateKey: true,
    });
    const stored = expectOk(
      await tenant.admin.certificates.getPrivateKey({ params: { certificateId: self.certificateId } }),
    );
    expect(stored.privateKey).toBe(self.privateKey);
    const row = await tenant.app.deps.db
      .selectFrom("pki_certificates")
      .select("encrypted_private_key")
      .where("id", "=", self.certificateId)
      .executeTakeFirstOrThrow();
    expect(row.encrypted_private_key).toMatch(/^v2:\d+:/);
    const selfCsr = await issue(tenant, { profileId: selfProfile.id, csr });
    expect(selfCsr.status).toBe(400);
  });

  it("answers 401, 422 and 404", async () => {
    const { tenant, profile } = await issuingHierarchy();
    const other = await issuingHierarchy();
    expect(
      (await tenant.anonymous.certificates.issue({ body: { profileId: profile.id, commonName: "a" } })).status,
    ).toBe(401);
    const invalid = [
      {},
      { profileId: profile.id, commonName: "a", ttl: "soon" },
      { profileId: profile.id, commonName: "a", ttl: "500" },
      { profileId: profile.id, commonName: "a", ttl: "1000000y" },
      { profileId: profile.id, commonName: "a", altNames: "not a host!" },
      { profileId: profile.id, commonName: "a", keyAlgorithm: "DSA" },
      { profileId: profile.id, csr: "x", keyAlgorithm: "RSA_2048" },
      { profileId: profile.id, commonName: "x".repeat(65) },
    ];
    for (const body of invalid) expect((await issue(tenant, body)).status, JSON.stringify(body)).toBe(422);
    for (const profileId of ["nope", randomUUID(), other.profile.id]) {
      const res = await issue(tenant, { profileId, commonName: "a" });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Certificate profile with ID '${profileId}' not found` });
    }
  });

  it("enforces the profile's limits, the CA's validity and status, and API enrollment with 400", async () => {
    const { tenant, project, issuing, profile } = await issuingHierarchy({ defaults: { ttlDays: 10 } });
    const tooLong = await issue(tenant, { profileId: profile.id, commonName: "a", ttl: "11d" });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ message: "The requested TTL exceeds the profile's maximum of 10 days" });
    const shortCa = await createRootCa(tenant, project.id, {
      notAfter: new Date(Date.now() + 5 * 86_400_000).toISOString(),
    });
    const shortProfile = await createApiProfile(tenant, project.id, shortCa.id);
    const outlives = await issue(tenant, { profileId: shortProfile.id, commonName: "a", ttl: "6d" });
    expect(outlives.status).toBe(400);
    expect(outlives.body).toMatchObject({ message: expect.stringContaining(`would outlive the CA ${shortCa.name}`) });
    expectIssued(await issue(tenant, { profileId: shortProfile.id, commonName: "a", ttl: "4d" }));
    const futureCa = await createRootCa(tenant, project.id, {
      notBefore: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const early = await issue(tenant, {
      profileId: (await createApiProfile(tenant, project.id, futureCa.id)).id,
      commonName: "a",
    });
    expect(early.status).toBe(400);
    expect(early.body).toMatchObject({
      message: expect.stringContaining(`The CA ${futureCa.name} is not valid before`),
    });
    expect(
      (
        await issue(tenant, {
          profileId: profile.id,
          csr: "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----",
        })
      ).status,
    ).toBe(400);
    const noName = await issue(tenant, { profileId: profile.id });
    expect(noName.status).toBe(400);

    const est = expectOk(
      await tenant.admin.certificateProfiles.create({
        body: {
          projectId: project.id,
          caId: issuing.id,
          slug: "est-only",
          enrollmentType: "est",
          estConfig: { passphrase: "p", disableBootstrapCaValidation: true },
        },
      }),
    ).certificateProfile;
    const notApi = await issue(tenant, { profileId: est.id, commonName: "a" });
    expect(notApi.status).toBe(400);
    expect(notApi.body).toMatchObject({
      message: "Profile est-only uses est enrollment; only API enrollment issues here",
    });
    expectOk(
      await tenant.admin.certificateAuthorities.update({ params: { caId: issuing.id }, body: { status: "disabled" } }),
    );
    const disabled = await issue(tenant, { profileId: profile.id, commonName: "a" });
    expect(disabled.status).toBe(400);
    expect(disabled.body).toMatchObject({ message: `The CA ${issuing.name} is disabled` });
  });

  it("answers 403 without issue-cert on the profile", async () => {
    const { tenant, project, profile } = await issuingHierarchy();
    for (const projectRole of ["no-access", "viewer"]) {
      const identity = await createIdentity(tenant, { projectId: project.id, projectRole });
      const res = await identity.client.certificates.issue({ body: { profileId: profile.id, commonName: "a" } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: "PermissionDenied",
        message: "You are not allowed to issue-cert on certificate-profiles",
      });
    }
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    expectOk(
      await member.client.certificates.issue({ body: { profileId: profile.id, commonName: "member.example.com" } }),
    );
  });
});
