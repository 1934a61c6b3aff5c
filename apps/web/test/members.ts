import { ok, type KeywardClient } from "@keyward/client";

/**
 * A machine identity of the project's organization (no organization rights) that is a member of the
 * project with `role`, and an access token for it: the console signed in as someone with less than admin.
 */
export const projectMemberToken = async (
  admin: KeywardClient,
  project: { id: string; orgId: string },
  name: string,
  role: string,
) => {
  const { identity } = await ok(
    admin.identities.create({ body: { name, organizationId: project.orgId, role: "no-access" } }),
  );
  await ok(admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { accessToken } = await ok(admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
  await ok(
    admin.projects.addIdentityMembership({
      params: { projectId: project.id, identityId: identity.id },
      body: { role },
    }),
  );
  return { id: identity.id, name: identity.name, token: accessToken };
};
