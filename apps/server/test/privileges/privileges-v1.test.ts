import { describe, expect, it } from "vitest";
import { expandLegacyPermissions } from "../../src/modules/privileges/legacy-permissions";
import { createIdentity, createTenant, createProject, expectOk } from "../helpers/tenant";
import { membershipIdOf, projectWithMember } from "../permissions/helpers";

const PRIVILEGE_PERMISSION = {
  actions: ["read" as const, "edit" as const],
  subject: "secrets" as const,
  conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
};

describe("v1 legacy permission forms", () => {
  it("expands privilegePermission into secrets rules and backfills imports, folders and dynamic secrets", () => {
    const conditions = { environment: "dev", secretPath: { $glob: "/app/**" } };
    expect(expandLegacyPermissions({ privilegePermission: PRIVILEGE_PERMISSION })).toEqual([
      { subject: "secrets", action: ["read", "readValue"], inverted: false, conditions },
      { subject: "secrets", action: ["edit"], inverted: false, conditions },
      { subject: "secret-imports", action: ["read"], inverted: false, conditions },
      { subject: "dynamic-secrets", action: ["read-root-credential"], inverted: false, conditions },
      { subject: "secret-imports", action: ["edit"], inverted: false, conditions },
      { subject: "secret-folders", action: ["edit"], inverted: false, conditions },
      { subject: "dynamic-secrets", action: ["edit-root-credential", "lease"], inverted: false, conditions },
    ]);
  });

  it("prefers privilegePermission over permissions and keeps given folder rules", () => {
    const permissions = [
      { action: "create" as const, subject: "secrets" as const },
      { action: "read" as const, subject: "secret-folders" as const },
    ];
    expect(expandLegacyPermissions({ permissions })).toEqual([
      { subject: "secrets", action: ["create"], inverted: false },
      { subject: "secret-folders", action: ["read"], inverted: false },
      { subject: "secret-imports", action: ["create"], inverted: false },
      { subject: "dynamic-secrets", action: ["create-root-credential"], inverted: false },
    ]);
    expect(expandLegacyPermissions({ permissions, privilegePermission: PRIVILEGE_PERMISSION })?.[0]?.action).toEqual([
      "read",
      "readValue",
    ]);
    expect(expandLegacyPermissions({})).toBeUndefined();
  });
});

describe("additional privileges v1", () => {
  it("creates permanent and temporary privileges addressed by project slug, with filtered rules", async () => {
    const { tenant, project, member } = await projectWithMember();
    const membershipId = await membershipIdOf(tenant, project.id, member.id);
    const v1 = tenant.admin.privileges.v1;
    const permanent = expectOk(
      await v1.createPermanent({
        body: {
          identityId: member.id,
          projectSlug: project.slug,
          slug: "perm",
          privilegePermission: PRIVILEGE_PERMISSION,
        },
      }),
    ).privilege;
    expect(permanent).toMatchObject({
      slug: "perm",
      projectMembershipId: membershipId,
      isTemporary: false,
      temporaryMode: null,
    });
    expect(permanent.permissions.map((r) => r.subject)).toEqual(["secrets", "secrets"]);
    expect(permanent.permissions[0]).toEqual({
      subject: "secrets",
      action: ["read", "readValue"],
      inverted: false,
      conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
    });

    const temporary = expectOk(
      await v1.createTemporary({
        body: {
          identityId: member.id,
          projectSlug: project.slug,
          permissions: [{ action: "read", subject: "environments" }],
          temporaryMode: "relative",
          temporaryRange: "10m",
          temporaryAccessStartTime: "2030-05-01T10:00:00Z",
        },
      }),
    ).privilege;
    expect(temporary).toMatchObject({
      slug: expect.stringMatching(/^[a-z0-9]+(-[a-z0-9]+)*$/),
      projectMembershipId: membershipId,
      isTemporary: true,
      temporaryRange: "10m",
      temporaryAccessStartTime: "2030-05-01T10:00:00.000Z",
      temporaryAccessEndTime: "2030-05-01T10:10:00.000Z",
      permissions: [{ subject: "environments", action: ["read"], inverted: false }],
    });
  });

  it("reads, lists, updates and deletes by slug", async () => {
    const { tenant, project, member } = await projectWithMember();
    const v1 = tenant.admin.privileges.v1;
    const lookup = { identityId: member.id, projectSlug: project.slug };
    const created = expectOk(
      await v1.createPermanent({ body: { ...lookup, slug: "one", privilegePermission: PRIVILEGE_PERMISSION } }),
    ).privilege;

    expect(expectOk(await v1.get({ params: { privilegeSlug: "one" }, query: lookup })).privilege).toEqual(created);
    expect(expectOk(await v1.list({ query: lookup })).privileges).toEqual([created]);

    const updated = expectOk(
      await v1.update({
        body: {
          ...lookup,
          privilegeSlug: "one",
          privilegeDetails: {
            slug: "two",
            permissions: [{ action: "read", subject: "environments" }],
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "1h",
            temporaryAccessStartTime: "2030-01-01T00:00:00Z",
          },
        },
      }),
    ).privilege;
    expect(updated).toMatchObject({
      id: created.id,
      slug: "two",
      isTemporary: true,
      temporaryAccessEndTime: "2030-01-01T01:00:00.000Z",
      permissions: [{ subject: "environments", action: ["read"], inverted: false }],
    });
    // Only the range changes: the stored start is kept and the end moves.
    const merged = expectOk(
      await v1.update({
        body: { ...lookup, privilegeSlug: "two", privilegeDetails: { temporaryRange: "2h", permissions: [] } },
      }),
    ).privilege;
    expect(merged).toMatchObject({
      temporaryAccessStartTime: "2030-01-01T00:00:00.000Z",
      temporaryAccessEndTime: "2030-01-01T02:00:00.000Z",
    });

    const deleted = expectOk(await v1.delete({ body: { ...lookup, privilegeSlug: "two" } })).privilege;
    expect(deleted).toMatchObject({ id: created.id, slug: "two" });
    expect(expectOk(await v1.list({ query: lookup })).privileges).toEqual([]);
  });

  it("answers 401 without a token or without any permission form", async () => {
    const { tenant, project, member } = await projectWithMember();
    const lookup = { identityId: member.id, projectSlug: project.slug };
    const anon = tenant.anonymous.privileges.v1;
    for (const res of [
      await anon.createPermanent({ body: lookup }),
      await anon.list({ query: lookup }),
      await anon.get({ params: { privilegeSlug: "x" }, query: lookup }),
      await anon.delete({ body: { ...lookup, privilegeSlug: "x" } }),
    ]) {
      expect(res.body).toMatchObject({ statusCode: 401, error: "UnauthorizedError" });
    }
    const v1 = tenant.admin.privileges.v1;
    const none = await v1.createPermanent({ body: lookup });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ message: "Permission or privilegePermission must be provided" });
    expectOk(await v1.createPermanent({ body: { ...lookup, slug: "p", privilegePermission: PRIVILEGE_PERMISSION } }));
    const slugOnly = await v1.update({ body: { ...lookup, privilegeSlug: "p", privilegeDetails: { slug: "q" } } });
    expect(slugOnly.status).toBe(401);
  });

  it("answers 422 for invalid legacy input", async () => {
    const { tenant, project, member } = await projectWithMember();
    const lookup = { identityId: member.id, projectSlug: project.slug };
    const v1 = tenant.admin.privileges.v1;
    for (const body of [
      { ...lookup, permissions: [{ action: "fly", subject: "secrets" }] },
      { ...lookup, permissions: [{ action: "read", subject: "dynamic-secrets" }] },
      { ...lookup, privilegePermission: { ...PRIVILEGE_PERMISSION, actions: [] } },
      { ...lookup, privilegePermission: { ...PRIVILEGE_PERMISSION, subject: "identity" } },
      {
        ...lookup,
        privilegePermission: {
          ...PRIVILEGE_PERMISSION,
          conditions: { environment: "dev", secretPath: { $glob: "(a|b)" } },
        },
      },
      { ...lookup, slug: "Not Valid", privilegePermission: PRIVILEGE_PERMISSION },
    ]) {
      expect((await v1.createPermanent({ body: body as never })).status).toBe(422);
    }
    const temporary = await v1.createTemporary({
      body: { ...lookup, privilegePermission: PRIVILEGE_PERMISSION } as never,
    });
    expect(temporary.status).toBe(422);
  });

  it("answers 404 for unknown projects and privileges, and 400 for broken temporary merges", async () => {
    const { tenant, project, member } = await projectWithMember();
    const lookup = { identityId: member.id, projectSlug: project.slug };
    const v1 = tenant.admin.privileges.v1;
    const other = await createTenant();
    const foreign = await createProject(other);
    const noProject = await v1.list({ query: { ...lookup, projectSlug: foreign.slug } });
    expect(noProject.body).toMatchObject({ statusCode: 404, message: `Project with slug ${foreign.slug} not found` });
    const noPrivilege = await v1.update({
      body: { ...lookup, privilegeSlug: "absent", privilegeDetails: { permissions: [] } },
    });
    expect(noPrivilege.body).toMatchObject({ statusCode: 404, message: "Privilege with slug absent not found" });
    expect((await v1.delete({ body: { ...lookup, privilegeSlug: "absent" } })).status).toBe(404);
    const noGet = await v1.get({ params: { privilegeSlug: "absent" }, query: lookup });
    expect(noGet.body).toMatchObject({
      statusCode: 404,
      message: "Additional privilege with name absent doesn't exist",
    });

    expectOk(
      await v1.createPermanent({ body: { ...lookup, slug: "perm", privilegePermission: PRIVILEGE_PERMISSION } }),
    );
    const broken = await v1.update({
      body: { ...lookup, privilegeSlug: "perm", privilegeDetails: { isTemporary: true, permissions: [] } },
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ message: "Temporary mode expects start time and range" });
    const duplicate = await v1.createPermanent({
      body: { ...lookup, slug: "perm", privilegePermission: PRIVILEGE_PERMISSION },
    });
    expect(duplicate.body).toMatchObject({ statusCode: 400, message: "Additional privilege with name perm exists" });
    const outsider = await createIdentity(tenant);
    const notMember = await v1.list({ query: { ...lookup, identityId: outsider.id } });
    expect(notMember.body).toMatchObject({ statusCode: 400, message: "Actor doesn't have membership" });
  });

  it("answers 403 to callers without identity permissions and for grants beyond their own", async () => {
    const { tenant, project, member } = await projectWithMember();
    const lookup = { identityId: member.id, projectSlug: project.slug };
    expectOk(
      await tenant.admin.privileges.v1.createPermanent({
        body: { ...lookup, slug: "p", privilegePermission: PRIVILEGE_PERMISSION },
      }),
    );
    const noAccess = (await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" })).client
      .privileges.v1;
    for (const [res, action] of [
      [await noAccess.createPermanent({ body: { ...lookup, privilegePermission: PRIVILEGE_PERMISSION } }), "edit"],
      [
        await noAccess.update({ body: { ...lookup, privilegeSlug: "p", privilegeDetails: { permissions: [] } } }),
        "edit",
      ],
      [await noAccess.delete({ body: { ...lookup, privilegeSlug: "p" } }), "edit"],
      [await noAccess.get({ params: { privilegeSlug: "p" }, query: lookup }), "read"],
      [await noAccess.list({ query: lookup }), "read"],
    ] as const) {
      expect(res.body).toMatchObject({
        statusCode: 403,
        error: "PermissionDenied",
        message: `You are not allowed to ${action} on identity`,
      });
    }
    const viewerLike = (await createIdentity(tenant, { projectId: project.id, projectRole: "member" })).client
      .privileges.v1;
    const beyond = await viewerLike.createPermanent({
      body: { ...lookup, permissions: [{ action: "delete", subject: "workspace" }] },
    });
    expect(beyond.body).toMatchObject({ statusCode: 403, error: "PermissionBoundaryError" });
  });
});
