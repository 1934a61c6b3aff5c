import { randomUUID } from "node:crypto";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";

export type FuzzActor = { name: string; token: string };

/** Real resources for generated requests to point at, so lookups and permission checks run, not only validation. */
export type FuzzWorld = {
  baseUrl: string;
  actors: FuzzActor[];
  /** Real values for a field of the named operation (certificate operations get the cert-manager project). */
  knownValues: (operationName: string) => (key: string) => readonly string[];
};

/**
 * A tenant of its own with a secret-manager and a cert-manager project (with a root CA), a victim
 * identity; the actors are the instance admin, the organization's admin and a project viewer. The actors' own identities are
 * never offered as targets, so a generated delete cannot lock the run out.
 */
export const buildFuzzWorld = async (): Promise<FuzzWorld> => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  const certProject = await createProject(tenant, "cert-manager");
  const ca = expectOk(
    await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: certProject.id,
        name: uniqueName("fuzz-root"),
        configuration: { type: "root", commonName: "Fuzz Root", keyAlgorithm: "EC_prime256v1" },
      },
    }),
  ).certificateAuthority;
  const profile = expectOk(
    await tenant.admin.certificateProfiles.create({
      body: {
        projectId: certProject.id,
        caId: ca.id,
        slug: uniqueName("fuzz"),
        enrollmentType: "api",
        issuerType: "ca",
      },
    }),
  ).certificateProfile;
  const victim = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "member" });
  const viewer = await createIdentity(tenant, { orgRole: "member", projectId: project.id, projectRole: "viewer" });
  const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("fuzz-group") } }));

  const ids = [project.id, certProject.id, victim.id, ca.id, profile.id, group.id, tenant.orgId, randomUUID()];
  const byKey = (projectId: string): [RegExp, readonly string[]][] => [
    [/^(projectId|workspaceId)$/, [projectId]],
    [/identityId$/i, [victim.id]],
    [/^caId$|^parentCaId$/, [ca.id]],
    [/profileId$/i, [profile.id]],
    [/^(organizationId|orgId)$/, [tenant.orgId]],
    [/^(id|groupId|groupIdOrName)$/, [group.id, group.slug]],
    [/^projectSlug$/, [project.slug]],
    [/(environment|environmentSlug|envSlug|slug)$/i, ["dev", "staging", "prod"]],
    [/(path|secretPath|importPath)$/i, ["/", "/a", "/a/b"]],
    [/(role|roleSlug|projectRole)$/i, ["admin", "member", "viewer", "no-access"]],
    [/Id$/, ids],
  ];
  return {
    baseUrl: tenant.app.baseUrl,
    actors: [
      { name: "instance admin", token: tenant.app.rootToken },
      { name: "organization admin", token: tenant.adminToken },
      { name: "project viewer", token: viewer.token },
    ],
    knownValues: (operationName) => {
      const table = byKey(operationName.startsWith("certificate") ? certProject.id : project.id);
      return (key) => table.find(([pattern]) => pattern.test(key))?.[1] ?? [];
    },
  };
};
