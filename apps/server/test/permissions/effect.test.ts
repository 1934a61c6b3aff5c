import type { ProjectPermissionRule } from "@keyward/contract";
import { inTransaction } from "../../src/db/transaction";
import { describe, expect, it } from "vitest";
import { bumpPermissionVersion } from "../../src/modules/authz/permission-version";
import { createIdentity, expectOk, uniqueName } from "../helpers/tenant";
import { grant, projectWithMember } from "./helpers";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const READ_ENVIRONMENTS: ProjectPermissionRule[] = [{ subject: "environments", action: "read" }];

describe("additional privileges take effect", () => {
  it("grants an action to a no-access identity until the privilege is deleted", async () => {
    const { tenant, project, member } = await projectWithMember("no-access");
    const list = () => member.client.projects.listEnvironments({ params: { projectId: project.id } });

    const denied = await list();
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to read on environments",
    });

    const privilege = await grant(tenant, project.id, member, READ_ENVIRONMENTS);
    expect((await list()).status).toBe(200);

    expectOk(await tenant.admin.privileges.v2.delete({ params: { id: privilege.id } }));
    expect((await list()).status).toBe(403);
  });

  it("honours a temporary privilege only inside its window", async () => {
    const { tenant, project, member } = await projectWithMember("no-access");
    const later = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const list = (identity: typeof member) =>
      identity.client.projects.listEnvironments({ params: { projectId: project.id } });
    const window = (start: number) =>
      ({
        isTemporary: true,
        temporaryMode: "relative",
        temporaryRange: "2s",
        temporaryAccessStartTime: new Date(start).toISOString(),
      }) as const;

    const now = Date.now();
    await grant(tenant, project.id, member, READ_ENVIRONMENTS, window(now));
    await grant(tenant, project.id, later, READ_ENVIRONMENTS, window(now + 2500));

    expect((await list(member)).status).toBe(200);
    expect((await list(later)).status).toBe(403);
    await sleep(now + 2200 - Date.now());
    expect((await list(member)).status).toBe(403);
    expect((await list(later)).status).toBe(403);
    await sleep(now + 2700 - Date.now());
    expect((await list(later)).status).toBe(200);
    await sleep(now + 4700 - Date.now());
    expect((await list(later)).status).toBe(403);
  });

  it("lets an inverted privilege take away what a role grants", async () => {
    const { tenant, project, member } = await projectWithMember("viewer");
    const list = () => member.client.projects.listEnvironments({ params: { projectId: project.id } });
    expect((await list()).status).toBe(200);

    const privilege = await grant(tenant, project.id, member, [
      { subject: "environments", action: ["read"], inverted: true },
    ]);
    const denied = await list();
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      details: expect.arrayContaining([expect.objectContaining({ inverted: true })]),
    });

    expectOk(await tenant.admin.privileges.v2.delete({ params: { id: privilege.id } }));
    expect((await list()).status).toBe(200);
  });

  it("evaluates identityId conditions against the object checked", async () => {
    const { tenant, project, member } = await projectWithMember("no-access");
    const other = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    await grant(tenant, project.id, member, [
      { subject: "identity", action: "read", conditions: { identityId: other.id } },
    ]);
    const read = (identityId: string) =>
      member.client.projects.getIdentityMembership({ params: { projectId: project.id, identityId } });
    expect((await read(other.id)).status).toBe(200);
    expect((await read(member.id)).status).toBe(403);
  });

  it("allows exactly the folders an environment and secretPath $glob condition matches", async () => {
    const { tenant, project, member } = await projectWithMember("no-access");
    for (const [path, name] of [
      ["/", "app"],
      ["/app", "web"],
      ["/", "other"],
    ] as const) {
      expectOk(await tenant.admin.folders.create({ body: { projectId: project.id, environment: "dev", path, name } }));
    }
    await grant(tenant, project.id, member, [
      {
        subject: "secret-imports",
        action: "read",
        conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
      },
    ]);
    const list = (environment: string, path: string) =>
      member.client.secretImports.list({ query: { projectId: project.id, environment, path } });
    expect((await list("dev", "/app")).status).toBe(200);
    expect((await list("dev", "/app/web")).status).toBe(200);
    expect((await list("dev", "/other")).status).toBe(403);
    expect((await list("dev", "/")).status).toBe(403);
    expect((await list("prod", "/app/web")).status).toBe(403);
  });

  it("sees role and membership changes on the very next request", async () => {
    const { tenant, project, member } = await projectWithMember("viewer");
    const list = () => member.client.projects.listEnvironments({ params: { projectId: project.id } });
    expect((await list()).status).toBe(200);
    expectOk(
      await tenant.admin.projects.updateIdentityMembership({
        params: { projectId: project.id, identityId: member.id },
        body: { roles: [{ role: "no-access" }] },
      }),
    );
    expect((await list()).status).toBe(403);
    expectOk(
      await tenant.admin.projects.deleteIdentityMembership({
        params: { projectId: project.id, identityId: member.id },
      }),
    );
    const gone = await list();
    expect(gone.status).toBe(403);
    expect(gone.body).toMatchObject({ error: "ProjectMembershipNotFound" });
  });

  it("counts the project roles of the identity's groups", async () => {
    const { tenant, project } = await projectWithMember("no-access");
    const outsider = await createIdentity(tenant);
    const list = () => outsider.client.projects.listEnvironments({ params: { projectId: project.id } });
    expect((await list()).body).toMatchObject({ error: "ProjectMembershipNotFound" });

    // Group membership is set up in storage directly: the group endpoints belong to another module.
    const db = tenant.app.deps.db;
    const group = await db
      .insertInto("groups")
      .values({ org_id: tenant.orgId, name: uniqueName("group"), slug: uniqueName("group") })
      .returning("id")
      .executeTakeFirstOrThrow();
    await db.insertInto("group_identity_members").values({ group_id: group.id, identity_id: outsider.id }).execute();
    const membership = await db
      .insertInto("group_project_memberships")
      .values({ group_id: group.id, project_id: project.id })
      .returning("id")
      .executeTakeFirstOrThrow();
    await db
      .insertInto("group_project_membership_roles")
      .values({ membership_id: membership.id, role: "viewer", custom_role_id: null })
      .execute();
    await inTransaction(db, (trx) => bumpPermissionVersion(trx, [project.id]));

    expect((await list()).status).toBe(200);
    expect(
      (await outsider.client.projects.deleteEnvironment({ params: { projectId: project.id, environmentId: "x" } }))
        .status,
    ).toBe(403);
  });
});
