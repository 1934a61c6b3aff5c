import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createApiProfile, createCertProject, createRootCa } from "../../pki/pki-helpers";
import { uniqueName, type Tenant } from "../../helpers/tenant";
import { ok, type Step } from "./runner";

type PkiOperation = Extract<
  MutatingOperation,
  `certificateAuthorities.${string}` | `certificateProfiles.${string}` | `certificates.${string}`
>;

const inYears = (years: number) => new Date(Date.now() + years * 365 * 24 * 3600 * 1000).toISOString();

const withCa = async (tenant: Tenant) => {
  const project = await createCertProject(tenant);
  return { project, ca: await createRootCa(tenant, project.id) };
};

const withProfile = async (tenant: Tenant, enrollmentType: "api" | "acme" = "api") => {
  const { project, ca } = await withCa(tenant);
  return { project, ca, profile: await createApiProfile(tenant, project.id, ca.id, { enrollmentType }) };
};

const withCertificate = async (tenant: Tenant) => {
  const { project, profile } = await withProfile(tenant);
  const issued = ok(
    await tenant.admin.certificates.issue({ body: { profileId: profile.id, commonName: "audit.example.com" } }),
  );
  return { project, profile, certificateId: issued.certificateId };
};

export const PKI_STEPS: Record<PkiOperation, Step> = {
  "certificateAuthorities.create": async ({ tenant, act }) => {
    const project = await createCertProject(tenant);
    const name = uniqueName("root");
    const ca = await act(() => createRootCa(tenant, project.id, {}, name));
    return { projectId: project.id, metadata: { caId: ca.id, name } };
  },
  "certificateAuthorities.update": async ({ tenant, act }) => {
    const { project, ca } = await withCa(tenant);
    ok(
      await act(() =>
        tenant.admin.certificateAuthorities.update({ params: { caId: ca.id }, body: { status: "disabled" } }),
      ),
    );
    return { projectId: project.id, metadata: { caId: ca.id } };
  },
  "certificateAuthorities.delete": async ({ tenant, act }) => {
    const { project, ca } = await withCa(tenant);
    ok(await act(() => tenant.admin.certificateAuthorities.delete({ params: { caId: ca.id } })));
    return { projectId: project.id, metadata: { caId: ca.id } };
  },
  "certificateAuthorities.renew": async ({ tenant, act }) => {
    const { project, ca } = await withCa(tenant);
    ok(
      await act(() =>
        tenant.admin.certificateAuthorities.renew({
          params: { caId: ca.id },
          body: { type: "existing", notAfter: inYears(20) },
        }),
      ),
    );
    return { projectId: project.id, metadata: { caId: ca.id } };
  },
  "certificateProfiles.create": async ({ tenant, act }) => {
    const { project, ca } = await withCa(tenant);
    const slug = uniqueName("web");
    const profile = await act(() => createApiProfile(tenant, project.id, ca.id, { slug }));
    return { projectId: project.id, metadata: { profileId: profile.id, caId: ca.id, slug } };
  },
  "certificateProfiles.update": async ({ tenant, act }) => {
    const { project, profile } = await withProfile(tenant);
    ok(
      await act(() =>
        tenant.admin.certificateProfiles.update({ params: { profileId: profile.id }, body: { description: "new" } }),
      ),
    );
    return { projectId: project.id, metadata: { profileId: profile.id } };
  },
  "certificateProfiles.delete": async ({ tenant, act }) => {
    const { project, profile } = await withProfile(tenant);
    ok(await act(() => tenant.admin.certificateProfiles.delete({ params: { profileId: profile.id } })));
    return { projectId: project.id, metadata: { profileId: profile.id } };
  },
  "certificateProfiles.rotateAcmeEabSecret": async ({ tenant, act }) => {
    const { project, profile } = await withProfile(tenant, "acme");
    ok(await act(() => tenant.admin.certificateProfiles.rotateAcmeEabSecret({ params: { profileId: profile.id } })));
    return { projectId: project.id, metadata: { profileId: profile.id } };
  },
  "certificateProfiles.issueScepChallenge": async ({ tenant, act }) => {
    const { project, ca } = await withCa(tenant);
    const profile = await createApiProfile(tenant, project.id, ca.id, {
      enrollmentType: "scep",
      scepConfig: { challengeType: "dynamic" },
    });
    ok(await act(() => tenant.admin.certificateProfiles.issueScepChallenge({ params: { profileId: profile.id } })));
    return { projectId: project.id, metadata: { profileId: profile.id } };
  },
  "certificates.issue": async ({ tenant, act }) => {
    const { project, profile } = await withProfile(tenant);
    const issued = ok(
      await act(() =>
        tenant.admin.certificates.issue({ body: { profileId: profile.id, commonName: "audit.example.com" } }),
      ),
    );
    return { projectId: project.id, metadata: { certificateId: issued.certificateId, profileId: profile.id } };
  },
  "certificates.renew": async ({ tenant, act }) => {
    const { project, certificateId } = await withCertificate(tenant);
    const renewed = ok(await act(() => tenant.admin.certificates.renew({ params: { certificateId }, body: {} })));
    return {
      projectId: project.id,
      metadata: { certificateId, renewedCertificateId: renewed.certificateId },
    };
  },
  "certificates.revoke": async ({ tenant, act }) => {
    const { project, certificateId } = await withCertificate(tenant);
    ok(await act(() => tenant.admin.certificates.revoke({ params: { certificateId }, body: {} })));
    return { projectId: project.id, metadata: { certificateId } };
  },
};
