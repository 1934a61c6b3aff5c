import type { ProjectPermissionInputSchema } from "@keyward/contract";
import type { z } from "zod";
import {
  createIdentity,
  createProject,
  createTenant,
  expectOk,
  type Tenant,
  type TestIdentity,
} from "../helpers/tenant";

/** A rule in the request form, as a client writes it. */
export type RuleInput = z.input<typeof ProjectPermissionInputSchema>;

/** A tenant with a project and one identity in it holding `projectRole` (no-access by default). */
export const projectWithMember = async (projectRole = "no-access") => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  const member = await createIdentity(tenant, { projectId: project.id, projectRole });
  return { tenant, project, member };
};

/** The identity's project membership id, which v1 and most v2 privilege responses carry. */
export const membershipIdOf = async (tenant: Tenant, projectId: string, identityId: string) =>
  expectOk(await tenant.admin.projects.getIdentityMembership({ params: { projectId, identityId } })).identityMembership
    .id;

/** The admin grants `permissions` to `identity` through the v2 create route. */
export const grant = async (
  tenant: Tenant,
  projectId: string,
  identity: Pick<TestIdentity, "id">,
  permissions: RuleInput[],
  type:
    | { isTemporary: false }
    | { isTemporary: true; temporaryMode: "relative"; temporaryRange: string; temporaryAccessStartTime: string } = {
    isTemporary: false,
  },
) =>
  expectOk(
    await tenant.admin.privileges.v2.create({
      body: { identityId: identity.id, projectId, permissions, type },
    }),
  ).privilege;
