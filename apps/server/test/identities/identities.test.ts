import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";

const NIL_UUID = "00000000-0000-4000-8000-000000000000";

describe("organization identities", () => {
  it("creates, reads, lists, updates and deletes an identity", async () => {
    const tenant = await createTenant();
    const name = uniqueName("worker");
    const { identity } = expectOk(
      await tenant.admin.identities.create({
        body: { name, organizationId: tenant.orgId, role: "member", metadata: [{ key: "team", value: "payments" }] },
      }),
    );
    expect(identity).toMatchObject({
      name,
      orgId: tenant.orgId,
      role: "member",
      projectId: null,
      authMethods: [],
      hasDeleteProtection: false,
    });
    expect(identity.metadata).toEqual([{ id: expect.any(String), key: "team", value: "payments" }]);

    const got = expectOk(await tenant.admin.identities.get({ params: { identityId: identity.id } }));
    expect(got.identity.id).toBe(identity.id);

    const list = expectOk(await tenant.admin.identities.list({ query: { search: name } }));
    expect(list.totalCount).toBe(1);
    expect(list.identities[0]?.id).toBe(identity.id);

    const updated = expectOk(
      await tenant.admin.identities.update({
        params: { identityId: identity.id },
        body: { name: `${name}-2`, role: "no-access", metadata: [] },
      }),
    );
    expect(updated.identity).toMatchObject({ name: `${name}-2`, role: "no-access", metadata: [] });

    const deleted = expectOk(await tenant.admin.identities.delete({ params: { identityId: identity.id } }));
    expect(deleted.identity.id).toBe(identity.id);
    expect((await tenant.admin.identities.get({ params: { identityId: identity.id } })).status).toBe(404);
  });

  it("validates input with 422", async () => {
    const tenant = await createTenant();
    const res = await tenant.admin.identities.create({
      body: { name: "", organizationId: tenant.orgId, role: "member" },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ statusCode: 422, error: "ValidationFailure" });
    const meta = await tenant.admin.identities.create({
      body: { name: "x", organizationId: tenant.orgId, role: "member", metadata: [{ key: " ", value: "v" }] },
    });
    expect(meta.status).toBe(422);
  });

  it("refuses unknown roles (400) and another organization's id (403)", async () => {
    const tenant = await createTenant();
    const role = await tenant.admin.identities.create({
      body: { name: "x", organizationId: tenant.orgId, role: "superuser" },
    });
    expect(role.status).toBe(400);
    const other = await createTenant();
    const org = await tenant.admin.identities.create({
      body: { name: "x", organizationId: other.orgId, role: "member" },
    });
    expect(org.status).toBe(403);
  });

  it("answers 404 for missing, non-UUID and foreign identities", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    for (const identityId of [NIL_UUID, "not-a-uuid", other.adminIdentityId]) {
      const res = await tenant.admin.identities.get({ params: { identityId } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: "NotFound", message: `Failed to find identity with ID ${identityId}` });
      expect((await tenant.admin.identities.update({ params: { identityId }, body: { name: "x" } })).status).toBe(404);
      expect((await tenant.admin.identities.delete({ params: { identityId } })).status).toBe(404);
    }
  });

  it("answers parallel reads each with its own identity, and a foreign one 404, however they are batched", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const ids = [a.adminIdentityId, b.adminIdentityId, NIL_UUID, a.adminIdentityId];
    const [asA, asB] = await Promise.all(
      [a, b].map((t) => Promise.all(ids.map((identityId) => t.admin.identities.get({ params: { identityId } })))),
    );
    const outcome = (res: { status: number; body: unknown }) =>
      res.status === 200 ? (res.body as { identity: { id: string } }).identity.id : res.status;
    expect(asA!.map(outcome)).toEqual([a.adminIdentityId, 404, 404, a.adminIdentityId]);
    expect(asB!.map(outcome)).toEqual([404, b.adminIdentityId, 404, 404]);
  });

  it("honours delete protection", async () => {
    const tenant = await createTenant();
    const { identity } = expectOk(
      await tenant.admin.identities.create({
        body: { name: "guarded", organizationId: tenant.orgId, role: "member", hasDeleteProtection: true },
      }),
    );
    const res = await tenant.admin.identities.delete({ params: { identityId: identity.id } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: "Identity has delete protection" });
    expectOk(
      await tenant.admin.identities.update({
        params: { identityId: identity.id },
        body: { hasDeleteProtection: false },
      }),
    );
    expectOk(await tenant.admin.identities.delete({ params: { identityId: identity.id } }));
  });

  it("lists the identities created inside projects only when asked, each with its project, never another org's", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const name = uniqueName("in-project");
    const inProject = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name } }),
    ).identity;
    const other = await createTenant(tenant.app);
    const theirs = expectOk(
      await other.admin.projectIdentities.create({
        params: { projectId: (await createProject(other)).id },
        body: { name },
      }),
    ).identity;
    const names = async (query: { includeProjectIdentities?: "true" | "false" }) =>
      expectOk(await tenant.admin.identities.list({ query: { ...query, search: name } })).identities;
    expect(await names({})).toEqual([]);
    const all = await names({ includeProjectIdentities: "true" });
    expect(all.map((i) => [i.id, i.projectId])).toEqual([[inProject.id, project.id]]);
    expect(all.map((i) => i.id)).not.toContain(theirs.id);
    const nobody = await createIdentity(tenant, { orgRole: "no-access" });
    const refused = await nobody.client.identities.list({ query: { includeProjectIdentities: "true" } });
    expect(refused.status).toBe(403);
  });

  it("denies callers without the organization permission (403)", async () => {
    const tenant = await createTenant();
    const nobody = await createIdentity(tenant, { orgRole: "no-access" });
    const member = await createIdentity(tenant, { orgRole: "member" });
    const create = await nobody.client.identities.create({
      body: { name: "x", organizationId: tenant.orgId, role: "no-access" },
    });
    expect(create.status).toBe(403);
    expect(create.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on identity",
    });
    expect((await nobody.client.identities.list({ query: {} })).status).toBe(403);
    expect((await nobody.client.identities.get({ params: { identityId: member.id } })).status).toBe(403);
    expect(
      (await member.client.identities.update({ params: { identityId: nobody.id }, body: { name: "y" } })).status,
    ).toBe(403);
    expect((await member.client.identities.delete({ params: { identityId: nobody.id } })).status).toBe(403);
    // Members read identities but cannot create them.
    expect((await member.client.identities.get({ params: { identityId: nobody.id } })).status).toBe(200);
  });

  it("never lets an actor hand out a role above its own", async () => {
    const tenant = await createTenant();
    const admin = await createIdentity(tenant, { orgRole: "admin" });
    const res = await admin.client.identities.create({
      body: { name: "peer", organizationId: tenant.orgId, role: "admin" },
    });
    expect(res.status).toBe(200);
  });
});
