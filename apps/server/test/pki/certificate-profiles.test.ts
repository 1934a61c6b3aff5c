import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";
import { createCertProject, createCustomRole, createProfileRaw, createRootCa, setupCaProject } from "./pki-helpers";

const setup = setupCaProject;
const create = createProfileRaw;

describe("POST /api/v1/cert-manager/certificate-profiles", () => {
  it("creates profiles of every enrollment type, keeping secrets encrypted and out of responses", async () => {
    const { tenant, project, ca } = await setup();
    const caPem = expectOk(
      await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }),
    ).certificate;
    const defaults = {
      ttlDays: 30,
      commonName: "service.internal",
      keyAlgorithm: "EC_prime256v1",
      signatureAlgorithm: "ECDSA-SHA256",
      organization: "Keyward",
      keyUsages: ["digital_signature"],
      extendedKeyUsages: ["server_auth", "client_auth"],
      subjectAltNames: [{ type: "dns_name", value: "service.internal" }],
      basicConstraints: { isCA: false },
    };
    const api = expectOk(
      await create(tenant, {
        projectId: project.id,
        caId: ca.id,
        slug: "Web-Servers",
        description: "TLS",
        enrollmentType: "api",
        defaults,
        externalConfigs: { template: "t1" },
      }),
    ).certificateProfile;
    expect(api).toMatchObject({
      projectId: project.id,
      caId: ca.id,
      certificatePolicyId: null,
      slug: "web-servers",
      enrollmentType: "api",
      issuerType: "ca",
      defaults,
      externalConfigs: { template: "t1" },
      apiConfig: { autoRenew: false, renewBeforeDays: null, storePrivateKey: false },
      estConfigId: null,
      certificateAuthority: {
        id: ca.id,
        name: ca.name,
        status: "active",
        isExternal: false,
        keyAlgorithm: "EC_prime256v1",
      },
      metrics: {
        profileId: api.id,
        totalCertificates: 0,
        activeCertificates: 0,
        expiredCertificates: 0,
        expiringCertificates: 0,
        revokedCertificates: 0,
      },
    });
    expect(api.apiConfigId).toBe(api.apiConfig?.id);

    const est = expectOk(
      await create(tenant, {
        projectId: project.id,
        caId: ca.id,
        slug: "est-devices",
        enrollmentType: "est",
        estConfig: { passphrase: "est-passphrase-123", caChain: caPem },
      }),
    ).certificateProfile;
    expect(est.estConfig).toMatchObject({ id: est.estConfigId, disableBootstrapCaValidation: false, caChain: caPem });
    const acme = expectOk(
      await create(tenant, { projectId: project.id, caId: ca.id, slug: "acme", enrollmentType: "acme" }),
    ).certificateProfile;
    expect(acme.acmeConfig).toMatchObject({
      directoryUrl: `/api/v1/cert-manager/acme/profiles/${acme.id}/directory`,
      skipEabBinding: false,
    });
    const scep = await create(tenant, {
      projectId: project.id,
      caId: ca.id,
      slug: "scep",
      enrollmentType: "scep",
      scepConfig: { challengePassword: "scep-challenge-123" },
    });
    // SCEP is served (test/pki/scep.test.ts); its static challenge is kept only as a hash.
    expect(scep.status).toBe(200);
    const selfSigned = expectOk(
      await create(tenant, {
        projectId: project.id,
        slug: "self",
        enrollmentType: "api",
        issuerType: "self-signed",
        defaults: { keyAlgorithm: "RSA_2048" },
      }),
    ).certificateProfile;
    expect(selfSigned).toMatchObject({ caId: null, issuerType: "self-signed" });
    expect(selfSigned.certificateAuthority).toBeUndefined();

    const body = JSON.stringify([est, scep.body]);
    expect(body).not.toContain("est-passphrase-123");
    expect(body).not.toContain("scep-challenge-123");
    const secrets = await tenant.app.deps.db
      .selectFrom("pki_enrollment_configs")
      .select(["type", "encrypted_secret"])
      .where("profile_id", "in", [est.id, acme.id])
      .execute();
    expect(secrets).toHaveLength(2);
    for (const row of secrets) {
      expect(row.encrypted_secret).toMatch(/^v2:\d+:/);
      expect(row.encrypted_secret).not.toMatch(/passphrase/);
    }
  });

  it("answers 401 without a token and 422 on invalid bodies", async () => {
    const { tenant, project, ca } = await setup();
    const base = { projectId: project.id, caId: ca.id, slug: "p", enrollmentType: "api" };
    expect((await tenant.anonymous.certificateProfiles.create({ body: base as never })).status).toBe(401);
    const invalid = [
      { ...base, enrollmentType: "manual" },
      { ...base, issuerType: "external" },
      { ...base, caId: undefined },
      { ...base, issuerType: "self-signed" },
      { ...base, slug: "Has Spaces" },
      { ...base, estConfig: { passphrase: "x", disableBootstrapCaValidation: true } },
      { ...base, enrollmentType: "est" },
      { ...base, enrollmentType: "est", estConfig: { passphrase: "x" } },
      { ...base, enrollmentType: "scep", scepConfig: { challengeType: "static" } },
      { ...base, defaults: { ttlDays: 0 } },
      { ...base, defaults: { keyUsages: ["key_cert_sign"] } },
      { ...base, defaults: { keyAlgorithm: "RSA_1024" } },
      { ...base, defaults: { subjectAltNames: [{ type: "ip_address", value: "not-an-ip" }] } },
      { ...base, defaults: { subjectAltNames: [{ type: "dns_name", value: "bad_host!" }] } },
      { ...base, defaults: { customExtensions: [{ oid: "2.5.29.19", value: "AQH/" }] } },
      { ...base, defaults: { customExtensions: [{ oid: "not.an.oid", value: "AQH/" }] } },
      { ...base, defaults: { basicConstraints: { isCA: false, pathLength: 1 } } },
    ];
    for (const body of invalid) {
      const res = await create(tenant, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("answers 404 for unknown projects and CAs, 400 for business rules", async () => {
    const { tenant, project, ca } = await setup();
    const other = await createTenant();
    const foreignProject = await createCertProject(other);
    const foreignCa = await createRootCa(other, foreignProject.id);
    for (const projectId of ["nope", randomUUID(), foreignProject.id]) {
      expect((await create(tenant, { projectId, caId: ca.id, slug: "p", enrollmentType: "api" })).status).toBe(404);
    }
    for (const caId of ["nope", randomUUID(), foreignCa.id]) {
      const res = await create(tenant, { projectId: project.id, caId, slug: "p", enrollmentType: "api" });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `CA with ID '${caId}' not found` });
    }
    const secrets = await createProject(tenant, "secret-manager");
    expect(
      (await create(tenant, { projectId: secrets.id, caId: ca.id, slug: "p", enrollmentType: "api" })).status,
    ).toBe(400);

    const mismatch = await create(tenant, {
      projectId: project.id,
      caId: ca.id,
      slug: "p",
      enrollmentType: "api",
      defaults: { signatureAlgorithm: "RSA-SHA256" },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({
      message: "Signature algorithm RSA-SHA256 cannot be made with the CA's EC_prime256v1 key",
    });
    const badChain = await create(tenant, {
      projectId: project.id,
      caId: ca.id,
      slug: "p",
      enrollmentType: "est",
      estConfig: { passphrase: "x", caChain: "not a pem" },
    });
    expect(badChain.status).toBe(400);
    const leafOnly = await createRootCa(tenant, project.id, { maxPathLength: 0 });
    const caCert = await create(tenant, {
      projectId: project.id,
      caId: leafOnly.id,
      slug: "p",
      enrollmentType: "api",
      defaults: { basicConstraints: { isCA: true } },
    });
    expect(caCert.status).toBe(400);

    expectOk(await create(tenant, { projectId: project.id, caId: ca.id, slug: "taken", enrollmentType: "api" }));
    const dup = await create(tenant, { projectId: project.id, caId: ca.id, slug: "taken", enrollmentType: "api" });
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({ message: "A certificate profile with slug taken already exists in this project" });
  });

  it("answers 403 without create, and within the caller's slug conditions", async () => {
    const { tenant, project, ca } = await setup();
    const body = { projectId: project.id, caId: ca.id, slug: "web-1", enrollmentType: "api" as const };
    for (const projectRole of ["no-access", "viewer", "member"]) {
      const identity = await createIdentity(tenant, { projectId: project.id, projectRole });
      const res = await identity.client.certificateProfiles.create({ body });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: "PermissionDenied",
        message: "You are not allowed to create on certificate-profiles",
      });
    }
    const role = await createCustomRole(tenant, project.id, [
      {
        subject: "certificate-profiles",
        action: ["create", "read"],
        inverted: false,
        conditions: { slug: { $glob: "web-*" } },
      },
    ]);
    const scoped = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expectOk(await scoped.client.certificateProfiles.create({ body }));
    expect((await scoped.client.certificateProfiles.create({ body: { ...body, slug: "db-1" } })).status).toBe(403);
  });
});

describe("GET /api/v1/cert-manager/certificate-profiles", () => {
  it("filters, searches and pages with a totalCount that follows the filters", async () => {
    const { tenant, project, ca } = await setup();
    const made: string[] = [];
    const specs = [
      { slug: "web-api-1", enrollmentType: "api", description: "frontend tls" },
      { slug: "web-api-2", enrollmentType: "api" },
      { slug: "web-acme", enrollmentType: "acme" },
      {
        slug: "devices-est",
        enrollmentType: "est",
        estConfig: { passphrase: "p", disableBootstrapCaValidation: true },
      },
      { slug: "self-api", enrollmentType: "api", issuerType: "self-signed", caId: undefined },
    ];
    for (const spec of specs)
      made.push(
        expectOk(await create(tenant, { projectId: project.id, caId: ca.id, ...spec })).certificateProfile.slug,
      );
    const list = (query: Record<string, unknown>) =>
      tenant.admin.certificateProfiles.list({ query: { projectId: project.id, ...query } });

    const all = expectOk(await list({}));
    expect(all.totalCount).toBe(5);
    expect(all.certificateProfiles.map((p) => p.slug)).toEqual([...made].reverse());
    expect(all.certificateProfiles[0]).toMatchObject({ metrics: { totalCertificates: 0 } });
    expect(expectOk(await list({ limit: 2, offset: 1 }))).toMatchObject({
      totalCount: 5,
      certificateProfiles: [{ slug: "devices-est" }, { slug: "web-acme" }],
    });
    expect(expectOk(await list({ offset: 10 }))).toMatchObject({ totalCount: 5, certificateProfiles: [] });
    const apiOnly = expectOk(await list({ enrollmentType: "api" }));
    expect(apiOnly.totalCount).toBe(3);
    expect(apiOnly.certificateProfiles.every((p) => p.enrollmentType === "api")).toBe(true);
    expect(expectOk(await list({ enrollmentType: "api", issuerType: "ca", limit: 1 }))).toMatchObject({
      totalCount: 2,
      certificateProfiles: [{ slug: "web-api-2" }],
    });
    expect(expectOk(await list({ issuerType: "self-signed" }))).toMatchObject({
      totalCount: 1,
      certificateProfiles: [{ slug: "self-api" }],
    });
    expect(expectOk(await list({ search: "WEB-api" })).totalCount).toBe(2);
    expect(expectOk(await list({ search: "frontend" }))).toMatchObject({
      totalCount: 1,
      certificateProfiles: [{ slug: "web-api-1" }],
    });
    expect(expectOk(await list({ search: "%" })).totalCount).toBe(0);
    expect(expectOk(await list({ caId: ca.id })).totalCount).toBe(4);
    expect(expectOk(await list({ caId: "not-a-uuid" })).totalCount).toBe(0);
    expect(JSON.stringify(all)).not.toContain('"passphrase"');

    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificate-profiles", action: ["read"], inverted: false, conditions: { slug: { $glob: "web-*" } } },
      { subject: "certificate-profiles", action: ["read"], inverted: true, conditions: { slug: "web-acme" } },
    ]);
    const scoped = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    const visible = expectOk(
      await scoped.client.certificateProfiles.list({ query: { projectId: project.id, limit: 1 } }),
    );
    expect(visible).toMatchObject({ totalCount: 2, certificateProfiles: [{ slug: "web-api-2" }] });
    const visibleApi = expectOk(
      await scoped.client.certificateProfiles.list({ query: { projectId: project.id, enrollmentType: "acme" } }),
    );
    expect(visibleApi).toMatchObject({ totalCount: 0, certificateProfiles: [] });
  });

  it("answers 401, 422, 404, 400 and 403", async () => {
    const { tenant, project } = await setup();
    const other = await createTenant();
    expect((await tenant.anonymous.certificateProfiles.list({ query: { projectId: project.id } })).status).toBe(401);
    const missing = await tenant.admin.certificateProfiles.list({ query: {} as never });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ message: [{ path: ["projectId"] }] });
    for (const query of [
      { limit: 0 },
      { limit: 101 },
      { offset: -1 },
      { enrollmentType: "manual" },
      { issuerType: "x" },
    ]) {
      expect(
        (await tenant.admin.certificateProfiles.list({ query: { projectId: project.id, ...query } as never })).status,
      ).toBe(422);
    }
    for (const projectId of ["nope", randomUUID(), (await createCertProject(other)).id]) {
      expect((await tenant.admin.certificateProfiles.list({ query: { projectId } })).status).toBe(404);
    }
    const secrets = await createProject(tenant, "secret-manager");
    expect((await tenant.admin.certificateProfiles.list({ query: { projectId: secrets.id } })).status).toBe(400);
    const noAccess = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const denied = await noAccess.client.certificateProfiles.list({ query: { projectId: project.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to read on certificate-profiles" });
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.certificateProfiles.list({ query: { projectId: project.id } })).status).toBe(200);
  });
});
