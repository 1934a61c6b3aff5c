import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import { createApiProfile, createCertProject, createIntermediateCa, createRootCa, ensureOpenssl } from "./pki-helpers";

beforeAll(() => ensureOpenssl());

describe("PATCH and DELETE /api/v1/cert-manager/ca/internal/:caId", () => {
  it("renames and disables, with 400 on a taken name, 403 without edit and 422 on bad input", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const a = await createRootCa(tenant, project.id);
    const b = await createRootCa(tenant, project.id);
    const updated = expectOk(
      await tenant.admin.certificateAuthorities.update({
        params: { caId: a.id },
        body: { name: "renamed-ca", status: "disabled" },
      }),
    );
    expect(updated.certificateAuthority).toMatchObject({ name: "renamed-ca", status: "disabled" });
    const taken = await tenant.admin.certificateAuthorities.update({ params: { caId: a.id }, body: { name: b.name } });
    expect(taken.status).toBe(400);
    expect(
      (
        await tenant.admin.certificateAuthorities.update({
          params: { caId: a.id },
          body: { status: "pending" as never },
        })
      ).status,
    ).toBe(422);
    expect(
      (await tenant.anonymous.certificateAuthorities.update({ params: { caId: a.id }, body: { status: "active" } }))
        .status,
    ).toBe(401);
    expect(
      (await tenant.admin.certificateAuthorities.update({ params: { caId: randomUUID() }, body: { status: "active" } }))
        .status,
    ).toBe(404);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.certificateAuthorities.update({
      params: { caId: a.id },
      body: { status: "active" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit on certificate-authorities" });
  });

  it("deletes a CA nothing depends on and refuses one still in use", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const inter = await createIntermediateCa(tenant, project.id, root.id);
    const profile = await createApiProfile(tenant, project.id, inter.id);
    for (const caId of [root.id, inter.id]) {
      const res = await tenant.admin.certificateAuthorities.delete({ params: { caId } });
      expect(res.status).toBe(400);
    }
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect((await viewer.client.certificateAuthorities.delete({ params: { caId: inter.id } })).status).toBe(403);
    expect((await tenant.anonymous.certificateAuthorities.delete({ params: { caId: inter.id } })).status).toBe(401);
    expect((await tenant.admin.certificateAuthorities.delete({ params: { caId: "x" } })).status).toBe(404);

    expectOk(await tenant.admin.certificateProfiles.delete({ params: { profileId: profile.id } }));
    const deleted = expectOk(await tenant.admin.certificateAuthorities.delete({ params: { caId: inter.id } }));
    expect(deleted.certificateAuthority).toMatchObject({ id: inter.id, name: inter.name });
    expect((await tenant.admin.certificateAuthorities.get({ params: { caId: inter.id } })).status).toBe(404);
    expectOk(await tenant.admin.certificateAuthorities.delete({ params: { caId: root.id } }));
  });
});

describe("a cert-manager project's deletion", () => {
  it("removes its CA hierarchy, profiles and certificates in one cascade", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const inter = await createIntermediateCa(tenant, project.id, root.id);
    const profile = await createApiProfile(tenant, project.id, inter.id);
    const cert = expectOk(
      await tenant.admin.certificates.issue({
        body: { profileId: profile.id, commonName: "gone.example.com", keyAlgorithm: "EC_prime256v1" },
      }),
    );
    expectOk(await tenant.admin.projects.delete({ params: { projectId: project.id } }));
    expect((await tenant.admin.certificateAuthorities.get({ params: { caId: root.id } })).status).toBe(404);
    expect((await tenant.admin.certificateProfiles.get({ params: { profileId: profile.id } })).status).toBe(404);
    expect((await tenant.admin.certificates.get({ params: { certificateId: cert.certificateId } })).status).toBe(404);
  });
});
