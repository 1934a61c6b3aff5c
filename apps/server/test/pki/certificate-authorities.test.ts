import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import {
  createCertProject,
  createCustomRole,
  createIntermediateCa,
  createRootCa,
  describeCertificate,
  ensureOpenssl,
  verifyChain,
} from "./pki-helpers";

beforeAll(() => ensureOpenssl());

describe("POST /api/v1/cert-manager/ca/internal", () => {
  it("creates root and intermediate CAs whose chain openssl verifies, keys never returned", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id, {
      keyAlgorithm: "RSA_4096",
      country: "de",
      province: "Berlin",
      locality: "Berlin",
      ou: "PKI",
    });
    expect(root).toMatchObject({
      projectId: project.id,
      type: "internal",
      status: "active",
      configuration: { type: "root", keyAlgorithm: "RSA_4096", country: "DE", parentCaId: null, maxPathLength: -1 },
    });
    expect(root.configuration.dn).toContain(`CN=${root.name} Root`);
    expect(JSON.stringify(root)).not.toMatch(/PRIVATE KEY|encrypted/i);

    const inter = await createIntermediateCa(tenant, project.id, root.id, {
      keyAlgorithm: "EC_secp384r1",
      maxPathLength: 0,
    });
    expect(inter.configuration).toMatchObject({
      type: "intermediate",
      parentCaId: root.id,
      maxPathLength: 0,
      keyAlgorithm: "EC_secp384r1",
    });
    expect(new Date(inter.configuration.notAfter) <= new Date(root.configuration.notAfter)).toBe(true);

    const rootPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: root.id } }));
    expect(rootPem.certificateChain).toBe("");
    expect(rootPem.serialNumber).toBe(root.configuration.serialNumber);
    const interPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: inter.id } }));
    expect(interPem.certificateChain.trim()).toBe(rootPem.certificate.trim());
    const verified = verifyChain(interPem.certificate, rootPem.certificate);
    expect(verified.output).toContain(": OK");
    const text = describeCertificate(interPem.certificate);
    expect(text).toContain("CA:TRUE, pathlen:0");
    expect(text).toContain("Certificate Sign, CRL Sign");

    const stored = await tenant.app.deps.db
      .selectFrom("pki_certificate_authorities")
      .select("encrypted_private_key")
      .where("id", "=", root.id)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_private_key).toMatch(/^v2:\d+:/);
    expect(stored.encrypted_private_key).not.toContain("PRIVATE KEY");
  });

  it("answers 401 without a token and 422 on invalid configurations", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const base = { projectId: project.id, name: "ca-one" };
    const noToken = await tenant.anonymous.certificateAuthorities.create({
      body: { ...base, configuration: { type: "root", commonName: "x" } },
    });
    expect(noToken.status).toBe(401);
    const invalid = [
      { type: "root" },
      { type: "intermediate", commonName: "x" },
      { type: "root", commonName: "x", parentCaId: randomUUID() },
      { type: "root", commonName: "x", keyAlgorithm: "DSA_1024" },
      { type: "root", commonName: "x", country: "Germany" },
      { type: "root", commonName: "x", notBefore: "2030-01-01T00:00:00Z", notAfter: "2029-01-01T00:00:00Z" },
      { type: "root", commonName: "x", maxPathLength: -2 },
    ];
    for (const configuration of invalid) {
      const res = await tenant.admin.certificateAuthorities.create({
        body: { ...base, configuration: configuration as never },
      });
      expect(res.status, JSON.stringify(configuration)).toBe(422);
      expect(res.body).toMatchObject({ statusCode: 422, error: "ValidationFailure" });
    }
    const badName = await tenant.admin.certificateAuthorities.create({
      body: { ...base, name: "Not A Slug!", configuration: { type: "root", commonName: "x" } },
    });
    expect(badName.status).toBe(422);
  });

  it("answers 404 for missing, non-UUID and other-tenant projects and parents, 400 for the wrong project type", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const otherProject = await createCertProject(other);
    const configuration = { type: "root" as const, commonName: "x" };
    for (const projectId of [randomUUID(), "not-a-uuid", otherProject.id]) {
      const res = await tenant.admin.certificateAuthorities.create({ body: { projectId, name: "ca", configuration } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Project with ${projectId} not found` });
    }
    const secrets = await createProject(tenant, "secret-manager");
    const wrongType = await tenant.admin.certificateAuthorities.create({
      body: { projectId: secrets.id, name: "ca", configuration },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({
      message: "The project is of type secret-manager. Operations of type cert-manager are not allowed.",
    });

    const project = await createCertProject(tenant);
    const otherRoot = await createRootCa(other, otherProject.id);
    for (const parentCaId of [randomUUID(), "nope", otherRoot.id]) {
      const res = await tenant.admin.certificateAuthorities.create({
        body: {
          projectId: project.id,
          name: "inter",
          configuration: { type: "intermediate", commonName: "i", parentCaId },
        },
      });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `CA with ID '${parentCaId}' not found` });
    }
  });

  it("enforces names, path lengths, parent validity and parent status with 400", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id, { maxPathLength: 1 });
    const dup = await tenant.admin.certificateAuthorities.create({
      body: { projectId: project.id, name: root.name, configuration: { type: "root", commonName: "dup" } },
    });
    expect(dup.status).toBe(400);
    expect(dup.body).toMatchObject({
      message: `A certificate authority named ${root.name} already exists in this project`,
    });

    const tooDeep = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "deep",
        configuration: { type: "intermediate", commonName: "d", parentCaId: root.id, maxPathLength: 1 },
      },
    });
    expect(tooDeep.status).toBe(400);
    const inter = await createIntermediateCa(tenant, project.id, root.id);
    expect(inter.configuration.maxPathLength).toBe(0);
    const underZero = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "under-zero",
        configuration: { type: "intermediate", commonName: "u", parentCaId: inter.id },
      },
    });
    expect(underZero.status).toBe(400);
    expect(underZero.body).toMatchObject({
      message: "The parent CA has a path length of 0 and cannot sign intermediate CAs",
    });

    const outliving = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "outliving",
        configuration: { type: "intermediate", commonName: "o", parentCaId: root.id, notAfter: "2199-01-01T00:00:00Z" },
      },
    });
    expect(outliving.status).toBe(400);
    expect(outliving.body).toMatchObject({
      message: "The validity of an intermediate CA must lie within the validity of its parent CA",
    });
    const past = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "past",
        configuration: {
          type: "root",
          commonName: "p",
          notBefore: "2000-01-01T00:00:00Z",
          notAfter: "2001-01-01T00:00:00Z",
        },
      },
    });
    expect(past.status).toBe(400);

    expectOk(
      await tenant.admin.certificateAuthorities.update({ params: { caId: root.id }, body: { status: "disabled" } }),
    );
    const underDisabled = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "under-disabled",
        configuration: { type: "intermediate", commonName: "x", parentCaId: root.id },
      },
    });
    expect(underDisabled.status).toBe(400);
    expect(underDisabled.body).toMatchObject({ message: `The parent CA ${root.name} is disabled` });
  });

  it("answers 403 to non-members, to roles without create, and to roles without sign-intermediate", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const configuration = { type: "root" as const, commonName: "x" };
    const outsider = await createIdentity(tenant, { orgRole: "member" });
    const notMember = await outsider.client.certificateAuthorities.create({
      body: { projectId: project.id, name: "ca", configuration },
    });
    expect(notMember.status).toBe(403);
    expect(notMember.body).toMatchObject({ error: "ProjectMembershipNotFound" });
    for (const projectRole of ["no-access", "viewer", "member"]) {
      const identity = await createIdentity(tenant, { projectId: project.id, projectRole });
      const res = await identity.client.certificateAuthorities.create({
        body: { projectId: project.id, name: "ca", configuration },
      });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: "PermissionDenied",
        message: "You are not allowed to create on certificate-authorities",
      });
    }
    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificate-authorities", action: ["create", "read"], inverted: false },
    ]);
    const creator = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expectOk(
      await creator.client.certificateAuthorities.create({
        body: { projectId: project.id, name: uniqueName("own-root"), configuration },
      }),
    );
    const sign = await creator.client.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "inter",
        configuration: { type: "intermediate", commonName: "i", parentCaId: root.id },
      },
    });
    expect(sign.status).toBe(403);
    expect(sign.body).toMatchObject({ message: "You are not allowed to sign-intermediate on certificate-authorities" });
  });
});

describe("GET /api/v1/cert-manager/ca/internal(/:caId)", () => {
  it("gets and lists with paging, filtering rows by the caller's name conditions", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const cas = [];
    for (const name of ["team-a-root", "team-a-second", "team-b-root"])
      cas.push(await createRootCa(tenant, project.id, {}, name));
    const got = expectOk(await tenant.admin.certificateAuthorities.get({ params: { caId: cas[0]!.id } }));
    expect(got.certificateAuthority).toEqual(cas[0]);

    const all = expectOk(await tenant.admin.certificateAuthorities.list({ query: { projectId: project.id } }));
    expect(all.totalCount).toBe(3);
    expect(all.certificateAuthorities.map((c) => c.name)).toEqual(["team-a-root", "team-a-second", "team-b-root"]);
    const paged = expectOk(
      await tenant.admin.certificateAuthorities.list({ query: { projectId: project.id, offset: 1, limit: 1 } }),
    );
    expect(paged).toMatchObject({ totalCount: 3, certificateAuthorities: [{ name: "team-a-second" }] });

    const role = await createCustomRole(tenant, project.id, [
      {
        subject: "certificate-authorities",
        action: ["read"],
        inverted: false,
        conditions: { name: { $glob: "team-a-*" } },
      },
    ]);
    const teamA = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    const visible = expectOk(
      await teamA.client.certificateAuthorities.list({ query: { projectId: project.id, limit: 1 } }),
    );
    expect(visible).toMatchObject({ totalCount: 2, certificateAuthorities: [{ name: "team-a-root" }] });
    expect((await teamA.client.certificateAuthorities.get({ params: { caId: cas[2]!.id } })).status).toBe(403);
    expect((await teamA.client.certificateAuthorities.get({ params: { caId: cas[0]!.id } })).status).toBe(200);
  });

  it("answers 401, 422, 404 and 403 as it should", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const foreign = await createRootCa(other, (await createCertProject(other)).id);
    expect((await tenant.anonymous.certificateAuthorities.get({ params: { caId: root.id } })).status).toBe(401);
    expect((await tenant.anonymous.certificateAuthorities.list({ query: { projectId: project.id } })).status).toBe(401);
    expect((await tenant.anonymous.certificateAuthorities.getCertificate({ params: { caId: root.id } })).status).toBe(
      401,
    );
    expect((await tenant.anonymous.certificateAuthorities.getCrl({ params: { caId: root.id } })).status).toBe(401);
    for (const projectId of ["nope", randomUUID(), foreign.projectId]) {
      expect((await tenant.admin.certificateAuthorities.list({ query: { projectId } })).status).toBe(404);
    }
    const secrets = await createProject(tenant, "secret-manager");
    expect((await tenant.admin.certificateAuthorities.list({ query: { projectId: secrets.id } })).status).toBe(400);
    expect((await tenant.admin.certificateAuthorities.list({ query: {} as never })).status).toBe(422);
    expect(
      (await tenant.admin.certificateAuthorities.list({ query: { projectId: project.id, limit: 101 } })).status,
    ).toBe(422);
    for (const caId of ["not-a-uuid", randomUUID(), foreign.id]) {
      const res = await tenant.admin.certificateAuthorities.get({ params: { caId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `CA with ID '${caId}' not found` });
      expect((await tenant.admin.certificateAuthorities.getCertificate({ params: { caId } })).status).toBe(404);
      expect((await tenant.admin.certificateAuthorities.getCrl({ params: { caId } })).status).toBe(404);
    }
    const noAccess = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await noAccess.client.certificateAuthorities.get({ params: { caId: root.id } })).status).toBe(403);
    expect((await noAccess.client.certificateAuthorities.list({ query: { projectId: project.id } })).status).toBe(403);
    expect((await noAccess.client.certificateAuthorities.getCertificate({ params: { caId: root.id } })).status).toBe(
      403,
    );
    expect((await noAccess.client.certificateAuthorities.getCrl({ params: { caId: root.id } })).status).toBe(403);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.certificateAuthorities.get({ params: { caId: root.id } })).status).toBe(200);
  });
});
