import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";
import { grant, membershipIdOf, projectWithMember, type RuleInput } from "../permissions/helpers";

const RULES: RuleInput[] = [{ subject: "environments", action: ["read", "edit"] }];
const NIL = "00000000-0000-4000-8000-000000000000";
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;

describe("additional privileges v2", () => {
  it("creates a permanent privilege with a generated slug and no membership id in the response", async () => {
    const { tenant, project, member } = await projectWithMember();
    const { privilege } = expectOk(
      await tenant.admin.privileges.v2.create({
        body: { identityId: member.id, projectId: project.id, permissions: RULES, type: { isTemporary: false } },
      }),
    );
    expect(privilege).toEqual({
      id: expect.any(String),
      slug: expect.stringMatching(SLUG),
      permissions: [{ subject: "environments", action: ["read", "edit"], inverted: false }],
      isTemporary: false,
      temporaryMode: null,
      temporaryRange: null,
      temporaryAccessStartTime: null,
      temporaryAccessEndTime: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(privilege.slug.replaceAll("-", "").length).toBe(8);
  });

  it("computes a temporary privilege's end from its start and range", async () => {
    const { tenant, project, member } = await projectWithMember();
    const start = "2030-01-01T00:00:00.000Z";
    const { privilege } = expectOk(
      await tenant.admin.privileges.v2.create({
        body: {
          identityId: member.id,
          projectId: project.id,
          slug: "Temp-Access",
          permissions: RULES,
          type: {
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: "1.5h",
            temporaryAccessStartTime: start,
          },
        },
      }),
    );
    expect(privilege).toMatchObject({
      slug: "temp-access",
      isTemporary: true,
      temporaryMode: "relative",
      temporaryRange: "1.5h",
      temporaryAccessStartTime: start,
      temporaryAccessEndTime: "2030-01-01T01:30:00.000Z",
    });
  });

  it("reads, lists, renames, updates and deletes by id, carrying the membership id", async () => {
    const { tenant, project, member } = await projectWithMember();
    const membershipId = await membershipIdOf(tenant, project.id, member.id);
    const created = await grant(tenant, project.id, member, RULES, {
      isTemporary: true,
      temporaryMode: "relative",
      temporaryRange: "1d",
      temporaryAccessStartTime: new Date().toISOString(),
    });
    const v2 = tenant.admin.privileges.v2;

    const { privilege } = expectOk(await v2.get({ params: { id: created.id } }));
    expect(privilege).toEqual({ ...created, projectMembershipId: membershipId });
    const bySlug = expectOk(
      await v2.getBySlug({
        params: { privilegeSlug: created.slug },
        query: { identityId: member.id, projectSlug: project.slug },
      }),
    );
    expect(bySlug.privilege).toEqual(privilege);
    const { privileges } = expectOk(await v2.list({ query: { identityId: member.id, projectId: project.id } }));
    expect(privileges).toHaveLength(1);
    expect(privileges[0]).toMatchObject({ id: created.id, projectMembershipId: membershipId });
    expect(privileges[0]).not.toHaveProperty("permissions");

    const renamed = expectOk(
      await v2.update({ params: { id: created.id }, body: { slug: "renamed", type: { isTemporary: false } } }),
    ).privilege;
    expect(renamed).toMatchObject({
      slug: "renamed",
      projectMembershipId: membershipId,
      permissions: created.permissions,
      isTemporary: false,
      temporaryMode: null,
      temporaryRange: null,
      temporaryAccessStartTime: null,
      temporaryAccessEndTime: null,
    });
    const replaced = expectOk(
      await v2.update({
        params: { id: created.id },
        body: {
          slug: "renamed",
          permissions: [{ subject: "identity", action: "read", inverted: true }],
          type: { isTemporary: false },
        },
      }),
    ).privilege;
    expect(replaced.permissions).toEqual([{ subject: "identity", action: ["read"], inverted: true }]);

    const deleted = expectOk(await v2.delete({ params: { id: created.id } })).privilege;
    expect(deleted).toMatchObject({ id: created.id, slug: "renamed", projectMembershipId: membershipId });
    expect((await v2.get({ params: { id: created.id } })).status).toBe(404);
  });

  it("answers 401 without a token before validating", async () => {
    const { tenant } = await projectWithMember();
    const v2 = tenant.anonymous.privileges.v2;
    const responses = await Promise.all([
      v2.create({ body: {} as never }),
      v2.update({ params: { id: NIL }, body: {} as never }),
      v2.get({ params: { id: NIL } }),
      v2.delete({ params: { id: NIL } }),
      v2.getBySlug({ params: { privilegeSlug: "x" }, query: { identityId: "x", projectSlug: "x" } }),
      v2.list({ query: { identityId: "x", projectId: "x" } }),
    ]);
    for (const res of responses) expect(res.status).toBe(401);
  });

  it.each([
    ["a missing type", { type: undefined }],
    ["an empty action list", { permissions: [{ subject: "environments", action: [] }] }],
    ["an unknown subject", { permissions: [{ subject: "planets", action: "read" }] }],
    ["an unknown action", { permissions: [{ subject: "environments", action: "fly" }] }],
    ["an invalid slug", { slug: "no spaces" }],
    ["a too long slug", { slug: "a".repeat(61) }],
    [
      "a range that is no duration",
      {
        type: {
          isTemporary: true,
          temporaryMode: "relative",
          temporaryRange: "soon",
          temporaryAccessStartTime: "2030-01-01T00:00:00Z",
        },
      },
    ],
    [
      "a start time with an offset",
      {
        type: {
          isTemporary: true,
          temporaryMode: "relative",
          temporaryRange: "1h",
          temporaryAccessStartTime: "2030-01-01T00:00:00+02:00",
        },
      },
    ],
    [
      "a temporary type without a range",
      { type: { isTemporary: true, temporaryMode: "relative", temporaryAccessStartTime: "2030-01-01T00:00:00Z" } },
    ],
  ])("answers 422 for %s", async (_name, patch) => {
    const { tenant, project, member } = await projectWithMember();
    const res = await tenant.admin.privileges.v2.create({
      body: {
        identityId: member.id,
        projectId: project.id,
        permissions: RULES,
        type: { isTemporary: false },
        ...patch,
      } as never,
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: "ValidationFailure" });
  });

  it("answers 404 for missing, foreign and malformed ids and projects", async () => {
    const { tenant, project, member } = await projectWithMember();
    const other = await createTenant();
    const otherProject = await createProject(other);
    const otherMember = await createIdentity(other, { projectId: otherProject.id });
    const foreign = await grant(other, otherProject.id, otherMember, RULES);
    const v2 = tenant.admin.privileges.v2;
    for (const id of ["not-a-uuid", NIL, foreign.id]) {
      for (const res of [
        await v2.get({ params: { id } }),
        await v2.delete({ params: { id } }),
        await v2.update({ params: { id }, body: { slug: "x", type: { isTemporary: false } } }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ error: "NotFound", message: `Privilege with id ${id} not found` });
      }
    }
    const noProject = await v2.create({
      body: { identityId: member.id, projectId: otherProject.id, permissions: RULES, type: { isTemporary: false } },
    });
    expect(noProject.body).toMatchObject({ statusCode: 404, message: `Project with ${otherProject.id} not found` });
    const noSlug = await v2.getBySlug({
      params: { privilegeSlug: "x" },
      query: { identityId: member.id, projectSlug: otherProject.slug },
    });
    expect(noSlug.body).toMatchObject({ statusCode: 404, message: `Project with slug ${otherProject.slug} not found` });
    const noPrivilege = await v2.getBySlug({
      params: { privilegeSlug: "absent" },
      query: { identityId: member.id, projectSlug: project.slug },
    });
    expect(noPrivilege.body).toMatchObject({
      statusCode: 404,
      message: "Additional privilege with name absent doesn't exist",
    });
    expect((await v2.list({ query: { identityId: member.id, projectId: "nope" } })).status).toBe(404);
  });

  it("answers parallel reads each with its own privilege, and a foreign one 404, however they are batched", async () => {
    const a = await projectWithMember();
    const b = await projectWithMember();
    const mine = await Promise.all(
      [RULES, [{ subject: "secrets", action: ["readValue"] }] as RuleInput[]].map((rules) =>
        grant(a.tenant, a.project.id, a.member, rules),
      ),
    );
    const theirs = await grant(b.tenant, b.project.id, b.member, RULES);
    const ids = [mine[0]!.id, theirs.id, mine[1]!.id, mine[0]!.id, NIL, theirs.id];

    const [asA, asB] = await Promise.all(
      [a.tenant, b.tenant].map((t) => Promise.all(ids.map((id) => t.admin.privileges.v2.get({ params: { id } })))),
    );

    const outcome = (res: { status: number; body: unknown }) =>
      res.status === 200 ? (res.body as { privilege: { id: string } }).privilege.id : res.status;
    expect(asA!.map(outcome)).toEqual([mine[0]!.id, 404, mine[1]!.id, mine[0]!.id, 404, 404]);
    expect(asB!.map(outcome)).toEqual([404, theirs.id, 404, 404, 404, theirs.id]);
    expect(asA![2]!.body).toMatchObject({
      privilege: { permissions: [{ subject: "secrets", action: ["readValue"] }] },
    });
  });

  it("answers 403 to callers without identity permissions", async () => {
    const { tenant, project, member } = await projectWithMember();
    const privilege = await grant(tenant, project.id, member, RULES);
    const caller = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const v2 = caller.client.privileges.v2;
    const cases = [
      [
        await v2.create({
          body: { identityId: member.id, projectId: project.id, permissions: RULES, type: { isTemporary: false } },
        }),
        "edit",
      ],
      [await v2.update({ params: { id: privilege.id }, body: { slug: "x", type: { isTemporary: false } } }), "edit"],
      [await v2.delete({ params: { id: privilege.id } }), "edit"],
      [await v2.get({ params: { id: privilege.id } }), "read"],
      [
        await v2.getBySlug({
          params: { privilegeSlug: privilege.slug },
          query: { identityId: member.id, projectSlug: project.slug },
        }),
        "read",
      ],
      [await v2.list({ query: { identityId: member.id, projectId: project.id } }), "read"],
    ] as const;
    for (const [res, action] of cases) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: "PermissionDenied",
        message: `You are not allowed to ${action} on identity`,
      });
    }
  });

  it("requires the target identity to be a project member", async () => {
    const { tenant, project } = await projectWithMember();
    const outsider = await createIdentity(tenant);
    const v2 = tenant.admin.privileges.v2;
    const created = await v2.create({
      body: { identityId: outsider.id, projectId: project.id, permissions: RULES, type: { isTemporary: false } },
    });
    expect(created.status).toBe(403);
    expect(created.body).toMatchObject({ error: "ProjectMembershipNotFound" });
    const listed = await v2.list({ query: { identityId: outsider.id, projectId: project.id } });
    expect(listed.status).toBe(400);
    expect(listed.body).toMatchObject({ message: "Actor doesn't have membership" });
    const bySlug = await v2.getBySlug({
      params: { privilegeSlug: "x" },
      query: { identityId: "not-a-uuid", projectSlug: project.slug },
    });
    expect(bySlug.status).toBe(400);
  });

  it("answers 400 for duplicate slugs and legacy read combinations", async () => {
    const { tenant, project, member } = await projectWithMember();
    const v2 = tenant.admin.privileges.v2;
    const body = {
      identityId: member.id,
      projectId: project.id,
      slug: "dup",
      permissions: RULES,
      type: { isTemporary: false as const },
    };
    expectOk(await v2.create({ body }));
    const again = await v2.create({ body });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: "BadRequest", message: "Additional privilege with name dup exists" });

    const second = expectOk(await v2.create({ body: { ...body, slug: "second" } })).privilege;
    const rename = await v2.update({ params: { id: second.id }, body: { slug: "dup", type: { isTemporary: false } } });
    expect(rename.status).toBe(400);
    expect(rename.body).toMatchObject({ message: "Additional privilege with provided slug already exists" });

    const combination = await v2.create({
      body: { ...body, slug: "combo", permissions: [{ subject: "secrets", action: ["read", "describeSecret"] }] },
    });
    expect(combination.status).toBe(400);
    expect(combination.body).toMatchObject({
      message: expect.stringMatching(/^You have selected Read, and Describe Secret\./),
    });
  });

  it("refuses to grant more than the caller holds, including the target's current rules", async () => {
    const { tenant, project, member } = await projectWithMember();
    const caller = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    const admin = await createIdentity(tenant, { projectId: project.id, projectRole: "admin" });
    const v2 = caller.client.privileges.v2;
    const create = (identityId: string, permissions: RuleInput[]) =>
      v2.create({ body: { identityId, projectId: project.id, permissions, type: { isTemporary: false } } });

    expect((await create(member.id, [{ subject: "environments", action: "read" }])).status).toBe(200);
    const beyond = await create(member.id, [{ subject: "identity", action: ["read", "grant-privileges"] }]);
    expect(beyond.status).toBe(403);
    expect(beyond.body).toMatchObject({
      error: "PermissionBoundaryError",
      message:
        "Failed to create additional privileges. Actor privilege level is not high enough to perform this action",
      details: { missingPermissions: [{ action: "grant-privileges", subject: "identity" }] },
    });
    const onAdmin = await create(admin.id, [{ subject: "environments", action: "read" }]);
    expect(onAdmin.status).toBe(403);
    expect(onAdmin.body).toMatchObject({ error: "PermissionBoundaryError" });
  });
});
