import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { projectWithMember, type RuleInput } from "../permissions/helpers";

const RULES: RuleInput[] = [
  { subject: "environments", action: "read" },
  {
    subject: "secrets",
    action: ["describeSecret", "readValue"],
    conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
  },
];
const NIL = "00000000-0000-4000-8000-000000000000";

const setup = async () => {
  const { tenant, project, member } = await projectWithMember("no-access");
  const createRole = (
    body: { slug?: string; name?: string; permissions?: RuleInput[]; description?: string | null } = {},
  ) =>
    tenant.admin.roles.create({
      params: { projectId: project.id },
      body: {
        slug: body.slug ?? uniqueName("role"),
        name: body.name ?? "Reader",
        permissions: body.permissions ?? RULES,
        description: body.description,
      },
    });
  return { tenant, project, member, createRole };
};

describe("custom project roles", () => {
  it("creates, reads, lists, updates and deletes a role", async () => {
    const { tenant, project, createRole } = await setup();
    const { role } = expectOk(await createRole({ slug: "Env-Reader", name: "Env reader", description: "reads" }));
    expect(role).toMatchObject({
      slug: "env-reader",
      name: "Env reader",
      description: "reads",
      projectId: project.id,
      permissions: [
        { subject: "environments", action: ["read"], inverted: false },
        {
          subject: "secrets",
          action: ["describeSecret", "readValue"],
          inverted: false,
          conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
        },
      ],
    });
    expect(role.permissions[0]).not.toHaveProperty("conditions");

    const params = { projectId: project.id, roleId: role.id };
    expect(expectOk(await tenant.admin.roles.get({ params })).role).toEqual(role);
    expect(
      expectOk(await tenant.admin.roles.getBySlug({ params: { projectId: project.id, roleSlug: "env-reader" } })).role,
    ).toEqual(role);
    const { roles } = expectOk(await tenant.admin.roles.list({ params: { projectId: project.id } }));
    expect(roles.map((r) => r.slug)).toEqual(["admin", "member", "viewer", "no-access", "env-reader"]);

    const updated = expectOk(
      await tenant.admin.roles.update({
        params,
        body: { name: "Renamed", permissions: [{ subject: "role", action: ["read"] }] },
      }),
    ).role;
    expect(updated).toMatchObject({
      id: role.id,
      slug: "env-reader",
      name: "Renamed",
      permissions: [{ subject: "role", action: ["read"], inverted: false }],
    });

    expect(expectOk(await tenant.admin.roles.delete({ params })).role).toMatchObject({ id: role.id, name: "Renamed" });
    expect((await tenant.admin.roles.get({ params })).status).toBe(404);
  });

  it("reads built-in roles by slug with their rules", async () => {
    const { tenant, project } = await setup();
    const { role } = expectOk(
      await tenant.admin.roles.getBySlug({ params: { projectId: project.id, roleSlug: "viewer" } }),
    );
    expect(role).toMatchObject({ slug: "viewer", name: "Viewer" });
    expect(role.permissions).toContainEqual({ subject: "environments", action: ["read"], inverted: false });
    const missing = await tenant.admin.roles.getBySlug({ params: { projectId: project.id, roleSlug: "nope" } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: "Project role with slug nope not found" });
  });

  it("lets memberships hold custom roles, and sees rule changes on the next request", async () => {
    const { tenant, project, createRole } = await setup();
    const { role } = expectOk(await createRole({ permissions: [{ subject: "environments", action: "read" }] }));
    const holder = await createIdentity(tenant, { projectId: project.id, projectRole: role.slug });
    const list = () => holder.client.projects.listEnvironments({ params: { projectId: project.id } });
    expect((await list()).status).toBe(200);
    expectOk(
      await tenant.admin.roles.update({
        params: { projectId: project.id, roleId: role.id },
        body: { permissions: [] },
      }),
    );
    expect((await list()).status).toBe(403);
  });

  it("answers 400, never 500, when a role is deleted while it is being assigned, and leaves one consistent outcome", async () => {
    const { tenant, project } = await setup();
    const identities = await Promise.all(Array.from({ length: 12 }, () => createIdentity(tenant)));
    for (const identity of identities) {
      const { role } = expectOk(
        await tenant.admin.roles.create({
          params: { projectId: project.id },
          body: { slug: uniqueName("race"), name: "Race", permissions: RULES },
        }),
      );
      const [assigned, deleted] = await Promise.all([
        tenant.admin.projects.addIdentityMembership({
          params: { projectId: project.id, identityId: identity.id },
          body: { role: role.slug },
        }),
        tenant.admin.roles.delete({ params: { projectId: project.id, roleId: role.id } }),
      ]);
      expect([assigned.status, deleted.status].sort()).toEqual([200, 400]);
      const membership = await tenant.admin.projects.getIdentityMembership({
        params: { projectId: project.id, identityId: identity.id },
      });
      if (assigned.status === 200) {
        expect(deleted.body).toMatchObject({ statusCode: 400 });
        expect(expectOk(membership).identityMembership.roles).toEqual([
          expect.objectContaining({ customRoleSlug: role.slug }),
        ]);
      } else {
        expect(assigned.body).toMatchObject({ statusCode: 400, error: "BadRequest" });
        expect(membership.status).not.toBe(200);
      }
    }
  });

  it("answers 401 without a token", async () => {
    const { tenant, project } = await setup();
    const params = { projectId: project.id, roleId: NIL };
    const anon = tenant.anonymous.roles;
    const responses = await Promise.all([
      anon.create({ params: { projectId: project.id }, body: { slug: "x", name: "x", permissions: [] } }),
      anon.list({ params: { projectId: project.id } }),
      anon.get({ params }),
      anon.getBySlug({ params: { projectId: project.id, roleSlug: "x" } }),
      anon.update({ params, body: {} }),
      anon.delete({ params }),
    ]);
    for (const res of responses) expect(res.status).toBe(401);
  });

  it.each([
    ["a reserved slug", { slug: "admin" }],
    ["the custom slug", { slug: "custom" }],
    ["an invalid slug", { slug: "not a slug!" }],
    ["an unknown subject", { permissions: [{ subject: "nope", action: "read" }] }],
    ["an empty action list", { permissions: [{ subject: "secrets", action: [] }] }],
    [
      "a runaway glob",
      {
        permissions: [{ subject: "secrets", action: "readValue", conditions: { secretPath: { $glob: "*a*a*a*a*b" } } }],
      },
    ],
  ])("answers 422 for %s", async (_name, patch) => {
    const { createRole } = await setup();
    const res = await createRole(patch as never);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ statusCode: 422, error: "ValidationFailure" });
  });

  it("refuses reserved slugs on update too", async () => {
    const { tenant, project, createRole } = await setup();
    const { role } = expectOk(await createRole());
    const res = await tenant.admin.roles.update({
      params: { projectId: project.id, roleId: role.id },
      body: { slug: "viewer" },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain("Please choose a different slug, the slug you have entered is reserved");
  });

  it("answers 404 for missing, foreign and malformed ids", async () => {
    const { tenant, project, createRole } = await setup();
    const { role } = expectOk(await createRole());
    const otherProject = await createProject(tenant);
    const other = await createTenant();
    const otherTenantProject = await createProject(other);
    for (const params of [
      { projectId: project.id, roleId: "not-a-uuid" },
      { projectId: project.id, roleId: NIL },
      { projectId: otherProject.id, roleId: role.id },
    ]) {
      const res = await tenant.admin.roles.get({ params });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: "NotFound", message: `Project role with ID ${params.roleId} not found` });
      expect((await tenant.admin.roles.update({ params, body: { name: "x" } })).status).toBe(404);
      expect((await tenant.admin.roles.delete({ params })).status).toBe(404);
    }
    const foreign = await tenant.admin.roles.list({ params: { projectId: otherTenantProject.id } });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ message: `Project with ${otherTenantProject.id} not found` });
    expect((await tenant.admin.roles.list({ params: { projectId: "nope" } })).status).toBe(404);
  });

  it("answers 403 to members without role permissions", async () => {
    const { tenant, project, member, createRole } = await setup();
    const { role } = expectOk(await createRole());
    const params = { projectId: project.id, roleId: role.id };
    const client = member.client.roles;
    const cases = [
      [
        await client.create({ params: { projectId: project.id }, body: { slug: "x", name: "x", permissions: [] } }),
        "create",
      ],
      [await client.list({ params: { projectId: project.id } }), "read"],
      [await client.get({ params }), "read"],
      [await client.getBySlug({ params: { projectId: project.id, roleSlug: role.slug } }), "read"],
      [await client.update({ params, body: { name: "y" } }), "edit"],
      [await client.delete({ params }), "delete"],
    ] as const;
    for (const [res, action] of cases) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: "PermissionDenied",
        message: `You are not allowed to ${action} on role`,
      });
    }
    const outsider = await createIdentity(tenant);
    const notMember = await outsider.client.roles.list({ params: { projectId: project.id } });
    expect(notMember.body).toMatchObject({ statusCode: 403, error: "ProjectMembershipNotFound" });
  });

  it("answers 400 for duplicate slugs, legacy read combinations and roles in use", async () => {
    const { tenant, project, createRole } = await setup();
    const { role } = expectOk(await createRole({ slug: "taken" }));
    const { role: second } = expectOk(await createRole({ slug: "second" }));
    const duplicate = await createRole({ slug: "taken" });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({ error: "BadRequest", message: "Role with same slug already exists" });
    const rename = await tenant.admin.roles.update({
      params: { projectId: project.id, roleId: second.id },
      body: { slug: "taken" },
    });
    expect(rename.status).toBe(400);

    const combination = await createRole({ permissions: [{ subject: "secrets", action: ["read", "readValue"] }] });
    expect(combination.status).toBe(400);
    expect(combination.body).toMatchObject({
      message: expect.stringMatching(/^You have selected Read, and Read Value\./),
    });

    await createIdentity(tenant, { projectId: project.id, projectRole: role.slug });
    const inUse = await tenant.admin.roles.delete({ params: { projectId: project.id, roleId: role.id } });
    expect(inUse.status).toBe(400);
    expect(inUse.body).toMatchObject({
      message: "The role is assigned to one or more project memberships. Unassign it before deleting the role.",
    });
  });

  it("refuses to write a role granting more than the caller holds", async () => {
    const { tenant, project, createRole } = await setup();
    const { role: manager } = expectOk(
      await createRole({
        permissions: [
          { subject: "role", action: ["read", "create", "edit"] },
          { subject: "secrets", action: ["describeSecret"], conditions: { environment: "dev" } },
        ],
      }),
    );
    const caller = await createIdentity(tenant, { projectId: project.id, projectRole: manager.slug });
    const create = (permissions: RuleInput[]) =>
      caller.client.roles.create({
        params: { projectId: project.id },
        body: { slug: uniqueName("r"), name: "r", permissions },
      });

    expect(
      (
        await create([
          { subject: "secrets", action: "describeSecret", conditions: { environment: "dev", secretPath: "/a" } },
        ])
      ).status,
    ).toBe(200);
    const beyond = await create([
      { subject: "secrets", action: ["describeSecret", "edit"], conditions: { environment: "prod" } },
    ]);
    expect(beyond.status).toBe(403);
    expect(beyond.body).toMatchObject({
      error: "PermissionBoundaryError",
      message: "Failed to create role. Actor privilege level is not high enough to perform this action",
      details: {
        missingPermissions: [
          { action: "describeSecret", subject: "secrets", conditions: { environment: "prod" } },
          { action: "edit", subject: "secrets" },
        ],
      },
    });
    const update = await caller.client.roles.update({
      params: { projectId: project.id, roleId: manager.id },
      body: { permissions: [{ subject: "role", action: ["delete"] }] },
    });
    expect(update.status).toBe(403);
    expect(update.body).toMatchObject({
      error: "PermissionBoundaryError",
      message: expect.stringMatching(/^Failed to update role\./),
    });
  });
});
