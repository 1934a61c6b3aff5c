import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createApiProfile, createCertProject, createCustomRole, createRootCa, ensureOpenssl } from "./pki-helpers";

beforeAll(() => ensureOpenssl());

const YEAR_MS = 365 * 24 * 3600 * 1000;

describe("intermediate CA validity", () => {
  it("refuses a notBefore after the parent's end with 400 instead of signing notBefore > notAfter", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    // The root lives ten years; without notAfter the child's end is clamped to the root's.
    const notBefore = new Date(Date.now() + 11 * YEAR_MS).toISOString();
    const res = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: uniqueName("late"),
        configuration: { type: "intermediate", parentCaId: root.id, commonName: "Late", notBefore },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      message: "The validity of an intermediate CA must lie within the validity of its parent CA",
    });
  });
});

describe("GET /api/v1/cert-manager/certificates paging", () => {
  it("answers an offset beyond PostgreSQL's bigint with an empty page, not a 500", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const profile = await createApiProfile(tenant, project.id, root.id);
    expectOk(await tenant.admin.certificates.issue({ body: { profileId: profile.id, commonName: "a.example.com" } }));
    for (const offset of [1e20, 1e300]) {
      const res = await tenant.admin.certificates.list({ query: { projectId: project.id, offset } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ certificates: [], totalCount: 1 });
    }
  });
});

describe("certificate profiles that issue CA certificates", () => {
  it("need sign-intermediate on the profile's CA to be created or edited", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const profileRules = [
      { subject: "certificate-profiles", action: ["read", "create", "edit", "issue-cert"], inverted: false },
      { subject: "certificate-authorities", action: ["read"], inverted: false },
    ];
    const author = await createIdentity(tenant, {
      projectId: project.id,
      projectRole: await createCustomRole(tenant, project.id, profileRules),
    });
    const caDefaults = { basicConstraints: { isCA: true }, keyUsages: ["key_cert_sign", "crl_sign"] };
    const body = { projectId: project.id, caId: root.id, enrollmentType: "api" as const, issuerType: "ca" as const };

    const denied = await author.client.certificateProfiles.create({
      body: { ...body, slug: uniqueName("subca"), defaults: caDefaults } as never,
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to sign-intermediate on certificate-authorities",
    });

    const leaf = expectOk(
      await author.client.certificateProfiles.create({ body: { ...body, slug: uniqueName("leaf") } }),
    ).certificateProfile;
    const edit = await author.client.certificateProfiles.update({
      params: { profileId: leaf.id },
      body: { defaults: caDefaults } as never,
    });
    expect(edit.status).toBe(403);
    expect(
      expectOk(await tenant.admin.certificateProfiles.get({ params: { profileId: leaf.id } })).certificateProfile
        .defaults,
    ).toBeNull();
    // Leaf defaults stay allowed.
    expectOk(
      await author.client.certificateProfiles.update({
        params: { profileId: leaf.id },
        body: { defaults: { ttlDays: 30 } },
      }),
    );

    const signer = await createIdentity(tenant, {
      projectId: project.id,
      projectRole: await createCustomRole(tenant, project.id, [
        ...profileRules,
        {
          subject: "certificate-authorities",
          action: ["sign-intermediate"],
          inverted: false,
          conditions: { name: { $eq: root.name } },
        },
      ]),
    });
    expectOk(
      await signer.client.certificateProfiles.create({
        body: { ...body, slug: uniqueName("subca"), defaults: caDefaults } as never,
      }),
    );
    expectOk(
      await signer.client.certificateProfiles.update({
        params: { profileId: leaf.id },
        body: { defaults: caDefaults } as never,
      }),
    );
  });
});
