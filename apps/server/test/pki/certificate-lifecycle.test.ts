import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import {
  createApiProfile,
  createCertProject,
  createCustomRole,
  createIntermediateCa,
  createRootCa,
  ensureOpenssl,
  openssl,
  verifyChain,
  expectIssued,
} from "./pki-helpers";

beforeAll(() => ensureOpenssl());

const issue = async (tenant: Tenant, profileId: string, commonName: string, ttl = "30d", altNames = "") =>
  expectIssued(
    await tenant.admin.certificates.issue({
      body: { profileId, commonName, ttl, altNames, keyAlgorithm: "EC_prime256v1" },
    }),
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("certificate profile metrics", () => {
  it("count active, expiring, expired and revoked certificates per profile", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const ca = await createRootCa(tenant, project.id);
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const idle = await createApiProfile(tenant, project.id, ca.id);
    await issue(tenant, profile.id, "long.example.com", "90d");
    await issue(tenant, profile.id, "soon.example.com", "10d");
    const shortLived = await issue(tenant, profile.id, "brief.example.com", "2s");
    const revoked = await issue(tenant, profile.id, "revoked.example.com", "60d");
    expectOk(
      await tenant.admin.certificates.revoke({
        params: { certificateId: revoked.certificateId },
        body: { revocationReason: "SUPERSEDED" },
      }),
    );

    const before = expectOk(await tenant.admin.certificateProfiles.get({ params: { profileId: profile.id } }))
      .certificateProfile.metrics;
    expect(before).toEqual({
      profileId: profile.id,
      totalCertificates: 4,
      activeCertificates: 3,
      expiredCertificates: 0,
      expiringCertificates: 2,
      revokedCertificates: 1,
    });
    const notAfter = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: shortLived.certificateId } }),
    ).certificate.notAfter;
    await sleep(Math.max(0, new Date(notAfter).getTime() - Date.now()) + 250);

    const list = expectOk(await tenant.admin.certificateProfiles.list({ query: { projectId: project.id } }));
    const metrics = Object.fromEntries(list.certificateProfiles.map((p) => [p.id, p.metrics]));
    expect(metrics[profile.id]).toEqual({
      profileId: profile.id,
      totalCertificates: 4,
      activeCertificates: 2,
      expiredCertificates: 1,
      expiringCertificates: 1,
      revokedCertificates: 1,
    });
    expect(metrics[idle.id]).toMatchObject({ totalCertificates: 0, activeCertificates: 0, revokedCertificates: 0 });
  });
});

describe("POST /api/v1/cert-manager/certificates/:certificateId/revoke and the CA's CRL", () => {
  it("revokes once, lists the serial in the issuing CA's CRL, and openssl then rejects the certificate", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id, { keyAlgorithm: "RSA_2048" });
    const issuing = await createIntermediateCa(tenant, project.id, root.id);
    const profile = await createApiProfile(tenant, project.id, issuing.id);
    const rootPem = expectOk(
      await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: root.id } }),
    ).certificate;
    const keep = await issue(tenant, profile.id, "keep.example.com");
    const drop = await issue(tenant, profile.id, "drop.example.com");

    const res = expectOk(
      await tenant.admin.certificates.revoke({
        params: { certificateId: drop.certificateId },
        body: { revocationReason: "KEY_COMPROMISE" },
      }),
    );
    expect(res).toMatchObject({ message: "Successfully revoked certificate", serialNumber: drop.serialNumber });
    const record = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: drop.certificateId } }),
    ).certificate;
    expect(record).toMatchObject({ status: "revoked", revocationReason: "KEY_COMPROMISE", revokedAt: res.revokedAt });
    const again = await tenant.admin.certificates.revoke({ params: { certificateId: drop.certificateId }, body: {} });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "The certificate is already revoked" });

    const issuingCrl = expectOk(await tenant.admin.certificateAuthorities.getCrl({ params: { caId: issuing.id } })).crl;
    const rootCrl = expectOk(await tenant.admin.certificateAuthorities.getCrl({ params: { caId: root.id } })).crl;
    const crlText = openssl(["crl", "-in", "{crl}", "-noout", "-text"], { crl: issuingCrl }).output;
    expect(crlText.toLowerCase()).toContain(drop.serialNumber);
    expect(crlText.toLowerCase()).not.toContain(keep.serialNumber);
    expect(crlText).toContain("Key Compromise");
    expect(crlText).toContain("X509v3 CRL Number");
    const crlCheck = ["-crl_check_all"];
    expect(
      verifyChain(keep.certificate, rootPem, keep.certificateChain, crlCheck, `${issuingCrl}\n${rootCrl}`).output,
    ).toContain(": OK");
    const rejected = verifyChain(
      drop.certificate,
      rootPem,
      drop.certificateChain,
      crlCheck,
      `${issuingCrl}\n${rootCrl}`,
    );
    expect(rejected.ok).toBe(false);
    expect(rejected.output).toContain("certificate revoked");
  });

  it("answers 401, 422, 404 and 403", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const project = await createCertProject(tenant);
    const ca = await createRootCa(tenant, project.id);
    const profile = await createApiProfile(tenant, project.id, ca.id);
    const cert = await issue(tenant, profile.id, "a.example.com");
    const otherProject = await createCertProject(other);
    const foreign = await issue(
      other,
      (await createApiProfile(other, otherProject.id, (await createRootCa(other, otherProject.id)).id)).id,
      "b.example.com",
    );
    const params = { certificateId: cert.certificateId };
    expect((await tenant.anonymous.certificates.revoke({ params, body: {} })).status).toBe(401);
    expect(
      (await tenant.admin.certificates.revoke({ params, body: { revocationReason: "BORED" as never } })).status,
    ).toBe(422);
    for (const certificateId of ["nope", randomUUID(), foreign.certificateId]) {
      const res = await tenant.admin.certificates.revoke({ params: { certificateId }, body: {} });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Certificate with ID '${certificateId}' not found` });
    }
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.certificates.revoke({ params, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to delete on certificates" });
    expect((await viewer.client.certificates.getPrivateKey({ params })).status).toBe(403);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    expectOk(await member.client.certificates.revoke({ params, body: { revocationReason: "CESSATION_OF_OPERATION" } }));
  });
});

describe("GET /api/v1/cert-manager/certificates(/:certificateId)", () => {
  it("filters, searches and pages, with totalCount following filters and the caller's conditions", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const ca = await createRootCa(tenant, project.id);
    const other = await createRootCa(tenant, project.id);
    const web = await createApiProfile(tenant, project.id, ca.id);
    const db = await createApiProfile(tenant, project.id, other.id);
    const names = ["web-1.example.com", "web-2.example.com", "web-3.example.com"];
    const issued = [];
    for (const name of names) issued.push(await issue(tenant, web.id, name, "30d", `${name},alias-${name}`));
    const dbCert = await issue(tenant, db.id, "db-1.internal");
    expectOk(await tenant.admin.certificates.revoke({ params: { certificateId: issued[0]!.certificateId }, body: {} }));
    const crl = expectOk(await tenant.admin.certificateAuthorities.getCrl({ params: { caId: ca.id } })).crl;
    const crlText = openssl(["crl", "-in", "{crl}", "-noout", "-text"], { crl }).output;
    expect(crlText.toLowerCase()).toContain(issued[0]!.serialNumber);
    expect(crlText).toContain("Unspecified");
    const list = (query: Record<string, unknown>) =>
      tenant.admin.certificates.list({ query: { projectId: project.id, ...query } });

    const all = expectOk(await list({}));
    expect(all.totalCount).toBe(4);
    expect(all.certificates.map((c) => c.commonName)).toEqual(["db-1.internal", ...[...names].reverse()]);
    expect(JSON.stringify(all)).not.toContain("PRIVATE KEY");
    expect(expectOk(await list({ limit: 2, offset: 1 }))).toMatchObject({
      totalCount: 4,
      certificates: [{ commonName: "web-3.example.com" }, { commonName: "web-2.example.com" }],
    });
    expect(expectOk(await list({ profileId: web.id })).totalCount).toBe(3);
    expect(expectOk(await list({ caId: other.id }))).toMatchObject({
      totalCount: 1,
      certificates: [{ id: dbCert.certificateId }],
    });
    expect(expectOk(await list({ status: "revoked" }))).toMatchObject({
      totalCount: 1,
      certificates: [{ commonName: "web-1.example.com" }],
    });
    expect(expectOk(await list({ status: "active", profileId: web.id, limit: 1 }))).toMatchObject({
      totalCount: 2,
      certificates: [{ commonName: "web-3.example.com" }],
    });
    expect(expectOk(await list({ search: "alias-web-2" }))).toMatchObject({
      totalCount: 1,
      certificates: [{ commonName: "web-2.example.com" }],
    });
    expect(expectOk(await list({ search: issued[1]!.serialNumber.slice(0, 12) })).totalCount).toBe(1);
    expect(expectOk(await list({ profileId: "nope" })).totalCount).toBe(0);

    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificates", action: ["read"], inverted: false, conditions: { commonName: { $glob: "web-*" } } },
      { subject: "certificates", action: ["read"], inverted: true, conditions: { status: "revoked" } },
    ]);
    const scoped = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    const visible = expectOk(
      await scoped.client.certificates.list({ query: { projectId: project.id, limit: 1, offset: 1 } }),
    );
    expect(visible).toMatchObject({ totalCount: 2, certificates: [{ commonName: "web-2.example.com" }] });
    expect((await scoped.client.certificates.get({ params: { certificateId: dbCert.certificateId } })).status).toBe(
      403,
    );
    expect((await scoped.client.certificates.get({ params: { certificateId: issued[0]!.certificateId } })).status).toBe(
      403,
    );
    expect(
      (await scoped.client.certificates.getBundle({ params: { certificateId: issued[1]!.certificateId } })).status,
    ).toBe(200);
  });

  it("answers 401, 422, 404, 400 and 403", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const project = await createCertProject(tenant);
    const ca = await createRootCa(tenant, project.id);
    const cert = await issue(tenant, (await createApiProfile(tenant, project.id, ca.id)).id, "a.example.com");
    const params = { certificateId: cert.certificateId };
    expect((await tenant.anonymous.certificates.list({ query: { projectId: project.id } })).status).toBe(401);
    expect((await tenant.anonymous.certificates.get({ params })).status).toBe(401);
    expect((await tenant.anonymous.certificates.getBundle({ params })).status).toBe(401);
    expect((await tenant.anonymous.certificates.getPrivateKey({ params })).status).toBe(401);
    expect((await tenant.admin.certificates.list({ query: {} as never })).status).toBe(422);
    expect(
      (await tenant.admin.certificates.list({ query: { projectId: project.id, status: "expired" as never } })).status,
    ).toBe(422);
    expect((await tenant.admin.certificates.list({ query: { projectId: project.id, limit: 500 } })).status).toBe(422);
    for (const projectId of ["nope", randomUUID(), (await createCertProject(other)).id]) {
      expect((await tenant.admin.certificates.list({ query: { projectId } })).status).toBe(404);
    }
    expect(
      (await tenant.admin.certificates.list({ query: { projectId: (await createProject(tenant)).id } })).status,
    ).toBe(400);
    for (const certificateId of ["nope", randomUUID()]) {
      expect((await tenant.admin.certificates.get({ params: { certificateId } })).status).toBe(404);
      expect((await tenant.admin.certificates.getBundle({ params: { certificateId } })).status).toBe(404);
      expect((await tenant.admin.certificates.getPrivateKey({ params: { certificateId } })).status).toBe(404);
    }
    const noAccess = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const denied = await noAccess.client.certificates.list({ query: { projectId: project.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to read on certificates" });
    expect((await noAccess.client.certificates.get({ params })).status).toBe(403);
    expect((await noAccess.client.certificates.getBundle({ params })).status).toBe(403);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect(expectOk(await viewer.client.certificates.list({ query: { projectId: project.id } })).totalCount).toBe(1);
  });
});
