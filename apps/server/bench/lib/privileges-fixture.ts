import type { KeywardClient } from "@keyward/client";
import { setupOk } from "./endpoint";

/** Distinct privileges read in turn, so concurrent requests (and their batched lookups) hit different rows. */
export const PRIVILEGES = 64;

/** A project, an identity in it, and PRIVILEGES additional privileges; returns their read paths. */
export const preparePrivileges = async (admin: KeywardClient) => {
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench" } }));
  const { identity } = setupOk(
    await admin.identities.create({ body: { name: "bench-target", organizationId: project.orgId, role: "no-access" } }),
  );
  setupOk(
    await admin.projects.addIdentityMembership({
      params: { projectId: project.id, identityId: identity.id },
      body: { role: "viewer" },
    }),
  );
  const paths: string[] = [];
  for (let i = 0; i < PRIVILEGES; i += 1) {
    const { privilege } = setupOk(
      await admin.privileges.v2.create({
        body: {
          identityId: identity.id,
          projectId: project.id,
          permissions: [
            {
              subject: "secrets",
              action: ["describeSecret", "readValue"],
              conditions: { environment: "dev", secretPath: { $glob: `/app-${i}/**` } },
            },
          ],
          type: { isTemporary: false },
        },
      }),
    );
    paths.push(`/api/v2/identity-project-additional-privilege/${privilege.id}`);
  }
  return paths;
};
