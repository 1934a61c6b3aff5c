import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { insertOrgUser } from "../../helpers/structure";
import { createIdentity, createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { ok, type Step } from "./runner";

type AccessOperation = Extract<
  MutatingOperation,
  | `projects.${string}`
  | `roles.${string}`
  | `privileges.${string}`
  | `projectTemplates.${string}`
  | `groups.${string}`
  | `projectGroups.${string}`
>;

const RULES = [{ subject: "secrets" as const, action: ["read" as const] }];

const member = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const identity = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
  return { project, identity };
};

const privilegeV2 = async (tenant: Tenant) => {
  const { project, identity } = await member(tenant);
  const { privilege } = ok(
    await tenant.admin.privileges.v2.create({
      body: {
        identityId: identity.id,
        projectId: project.id,
        slug: uniqueName("priv"),
        permissions: RULES,
        type: { isTemporary: false },
      },
    }),
  );
  return { project, identity, privilege };
};

const group = async (tenant: Tenant) => ok(await tenant.admin.groups.create({ body: { name: uniqueName("group") } }));

const template = async (tenant: Tenant) =>
  ok(await tenant.admin.projectTemplates.create({ body: { name: uniqueName("tpl"), type: "secret-manager" } }))
    .projectTemplate;

export const ACCESS_STEPS: Record<AccessOperation, Step> = {
  "projects.createV2": async ({ tenant, act }) => {
    const name = uniqueName("project");
    const { project } = ok(await act(() => tenant.admin.projects.createV2({ body: { projectName: name } })));
    return { projectId: project.id, metadata: { projectId: project.id } };
  },
  "projects.create": async ({ tenant, act }) => {
    const name = uniqueName("project");
    const { project } = ok(await act(() => tenant.admin.projects.create({ body: { projectName: name } })));
    return { projectId: project.id, metadata: { projectId: project.id } };
  },
  "projects.delete": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    ok(await act(() => tenant.admin.projects.delete({ params: { projectId: project.id } })));
    return { projectId: project.id, metadata: { projectId: project.id, name: project.name, slug: project.slug } };
  },
  "projects.createEnvironment": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const { environment } = ok(
      await act(() =>
        tenant.admin.projects.createEnvironment({
          params: { projectId: project.id },
          body: { name: "QA", slug: "qa" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { environmentId: environment.id, slug: "qa", name: "QA" } };
  },
  "projects.updateEnvironment": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const dev = project.environments.find((env) => env.slug === "dev")!;
    ok(
      await act(() =>
        tenant.admin.projects.updateEnvironment({
          params: { projectId: project.id, environmentId: dev.id },
          body: { name: "Development" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { environmentId: dev.id, name: "Development" } };
  },
  "projects.deleteEnvironment": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const dev = project.environments.find((env) => env.slug === "dev")!;
    ok(
      await act(() =>
        tenant.admin.projects.deleteEnvironment({ params: { projectId: project.id, environmentId: dev.id } }),
      ),
    );
    return { projectId: project.id, metadata: { environmentId: dev.id } };
  },
  "projects.addIdentityMembership": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const identity = await createIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.projects.addIdentityMembership({
          params: { projectId: project.id, identityId: identity.id },
          body: { role: "viewer" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id } };
  },
  "projects.updateIdentityMembership": async ({ tenant, act }) => {
    const { project, identity } = await member(tenant);
    ok(
      await act(() =>
        tenant.admin.projects.updateIdentityMembership({
          params: { projectId: project.id, identityId: identity.id },
          body: { roles: [{ role: "member", isTemporary: false }] },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id } };
  },
  "projects.deleteIdentityMembership": async ({ tenant, act }) => {
    const { project, identity } = await member(tenant);
    ok(
      await act(() =>
        tenant.admin.projects.deleteIdentityMembership({ params: { projectId: project.id, identityId: identity.id } }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id } };
  },
  "roles.create": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const slug = uniqueName("role");
    const { role } = ok(
      await act(() =>
        tenant.admin.roles.create({
          params: { projectId: project.id },
          body: { slug, name: "Reader", permissions: RULES },
        }),
      ),
    );
    return { projectId: project.id, metadata: { roleId: role.id, slug } };
  },
  "roles.update": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const slug = uniqueName("role");
    const { role } = ok(
      await tenant.admin.roles.create({
        params: { projectId: project.id },
        body: { slug, name: "R", permissions: RULES },
      }),
    );
    ok(
      await act(() =>
        tenant.admin.roles.update({ params: { projectId: project.id, roleId: role.id }, body: { name: "Renamed" } }),
      ),
    );
    return { projectId: project.id, metadata: { roleId: role.id, name: "Renamed" } };
  },
  "roles.delete": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const slug = uniqueName("role");
    const { role } = ok(
      await tenant.admin.roles.create({
        params: { projectId: project.id },
        body: { slug, name: "R", permissions: RULES },
      }),
    );
    ok(await act(() => tenant.admin.roles.delete({ params: { projectId: project.id, roleId: role.id } })));
    return { projectId: project.id, metadata: { roleId: role.id } };
  },
  "privileges.v1.createPermanent": async ({ tenant, act }) => {
    const { project, identity } = await member(tenant);
    const slug = uniqueName("priv");
    const { privilege } = ok(
      await act(() =>
        tenant.admin.privileges.v1.createPermanent({
          body: {
            identityId: identity.id,
            projectSlug: project.slug,
            slug,
            privilegePermission: { actions: ["read"], subject: "secrets", conditions: { environment: "dev" } },
          },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id, slug } };
  },
  "privileges.v1.createTemporary": async ({ tenant, act }) => {
    const { project, identity } = await member(tenant);
    const slug = uniqueName("priv");
    const { privilege } = ok(
      await act(() =>
        tenant.admin.privileges.v1.createTemporary({
          body: {
            identityId: identity.id,
            projectSlug: project.slug,
            slug,
            privilegePermission: { actions: ["read"], subject: "secrets", conditions: { environment: "dev" } },
            temporaryMode: "relative",
            temporaryRange: "1h",
            temporaryAccessStartTime: new Date().toISOString(),
          },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id, slug } };
  },
  "privileges.v1.update": async ({ tenant, act }) => {
    const { project, identity, privilege } = await privilegeV2(tenant);
    ok(
      await act(() =>
        tenant.admin.privileges.v1.update({
          body: {
            privilegeSlug: privilege.slug,
            identityId: identity.id,
            projectSlug: project.slug,
            privilegeDetails: {
              privilegePermission: { actions: ["read"], subject: "secrets", conditions: { environment: "dev" } },
            },
          },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id } };
  },
  "privileges.v1.delete": async ({ tenant, act }) => {
    const { project, identity, privilege } = await privilegeV2(tenant);
    ok(
      await act(() =>
        tenant.admin.privileges.v1.delete({
          body: { privilegeSlug: privilege.slug, identityId: identity.id, projectSlug: project.slug },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id } };
  },
  "privileges.v2.create": async ({ tenant, act }) => {
    const { project, identity } = await member(tenant);
    const slug = uniqueName("priv");
    const { privilege } = ok(
      await act(() =>
        tenant.admin.privileges.v2.create({
          body: {
            identityId: identity.id,
            projectId: project.id,
            slug,
            permissions: RULES,
            type: { isTemporary: false },
          },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id, slug } };
  },
  "privileges.v2.update": async ({ tenant, act }) => {
    const { project, identity, privilege } = await privilegeV2(tenant);
    ok(
      await act(() =>
        tenant.admin.privileges.v2.update({
          params: { id: privilege.id },
          body: { slug: privilege.slug, type: { isTemporary: false } },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id } };
  },
  "privileges.v2.delete": async ({ tenant, act }) => {
    const { project, identity, privilege } = await privilegeV2(tenant);
    ok(await act(() => tenant.admin.privileges.v2.delete({ params: { id: privilege.id } })));
    return { projectId: project.id, metadata: { identityId: identity.id, privilegeId: privilege.id } };
  },
  "projectTemplates.create": async ({ tenant, act }) => {
    const name = uniqueName("tpl");
    const { projectTemplate } = ok(
      await act(() => tenant.admin.projectTemplates.create({ body: { name, type: "secret-manager" } })),
    );
    return { projectId: null, metadata: { templateId: projectTemplate.id, name } };
  },
  "projectTemplates.update": async ({ tenant, act }) => {
    const created = await template(tenant);
    ok(
      await act(() =>
        tenant.admin.projectTemplates.update({ params: { templateId: created.id }, body: { description: "new" } }),
      ),
    );
    return { projectId: null, metadata: { templateId: created.id } };
  },
  "projectTemplates.delete": async ({ tenant, act }) => {
    const created = await template(tenant);
    ok(await act(() => tenant.admin.projectTemplates.delete({ params: { templateId: created.id } })));
    return { projectId: null, metadata: { templateId: created.id, name: created.name } };
  },
  "groups.create": async ({ tenant, act }) => {
    const name = uniqueName("group");
    const created = ok(await act(() => tenant.admin.groups.create({ body: { name } })));
    return { projectId: null, metadata: { groupId: created.id, name } };
  },
  "groups.update": async ({ tenant, act }) => {
    const created = await group(tenant);
    ok(await act(() => tenant.admin.groups.update({ params: { id: created.id }, body: { name: "renamed" } })));
    return { projectId: null, metadata: { id: created.id, name: "renamed" } };
  },
  "groups.delete": async ({ tenant, act }) => {
    const created = await group(tenant);
    ok(await act(() => tenant.admin.groups.delete({ params: { id: created.id } })));
    return { projectId: null, metadata: { id: created.id } };
  },
  "groups.addUser": async ({ tenant, act }) => {
    const created = await group(tenant);
    const user = await insertOrgUser(tenant);
    ok(await act(() => tenant.admin.groups.addUser({ params: { id: created.id, username: user.username } })));
    return { projectId: null, metadata: { id: created.id, username: user.username } };
  },
  "groups.removeUser": async ({ tenant, act }) => {
    const created = await group(tenant);
    const user = await insertOrgUser(tenant);
    ok(await tenant.admin.groups.addUser({ params: { id: created.id, username: user.username } }));
    ok(await act(() => tenant.admin.groups.removeUser({ params: { id: created.id, username: user.username } })));
    return { projectId: null, metadata: { id: created.id, username: user.username } };
  },
  "groups.addIdentity": async ({ tenant, act }) => {
    const created = await group(tenant);
    const identity = await createIdentity(tenant);
    ok(
      await act(() => tenant.admin.groups.addIdentity({ params: { id: created.id, machineIdentityId: identity.id } })),
    );
    return { projectId: null, metadata: { id: created.id, machineIdentityId: identity.id } };
  },
  "groups.removeIdentity": async ({ tenant, act }) => {
    const created = await group(tenant);
    const identity = await createIdentity(tenant);
    ok(await tenant.admin.groups.addIdentity({ params: { id: created.id, machineIdentityId: identity.id } }));
    ok(
      await act(() =>
        tenant.admin.groups.removeIdentity({ params: { id: created.id, machineIdentityId: identity.id } }),
      ),
    );
    return { projectId: null, metadata: { id: created.id, machineIdentityId: identity.id } };
  },
  "projectGroups.add": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const created = await group(tenant);
    ok(
      await act(() =>
        tenant.admin.projectGroups.add({
          params: { projectId: project.id, groupIdOrName: created.id },
          body: { role: "viewer" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { groupIdOrName: created.id } };
  },
  "projectGroups.update": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const created = await group(tenant);
    ok(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: created.id },
        body: { role: "viewer" },
      }),
    );
    ok(
      await act(() =>
        tenant.admin.projectGroups.update({
          params: { projectId: project.id, groupId: created.id },
          body: { roles: [{ role: "member", isTemporary: false }] },
        }),
      ),
    );
    return { projectId: project.id, metadata: { groupId: created.id } };
  },
  "projectGroups.remove": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const created = await group(tenant);
    ok(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: created.id },
        body: { role: "viewer" },
      }),
    );
    ok(await act(() => tenant.admin.projectGroups.remove({ params: { projectId: project.id, groupId: created.id } })));
    return { projectId: project.id, metadata: { groupId: created.id } };
  },
};
