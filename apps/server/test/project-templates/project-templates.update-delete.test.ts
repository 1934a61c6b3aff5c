import type { ProjectPermissionRule } from "@keyward/contract";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

const DEFAULT_ID = "b11b49a9-09a9-4443-916a-4246f9ff2c69";

const readerRole = {
  name: "Reader",
  slug: "reader",
  permissions: [{ subject: "secrets", action: "read" }] satisfies ProjectPermissionRule[],
};

const createTemplate = async (tenant: Tenant, extra: Record<string, unknown> = {}) =>
  expectOk(
    await tenant.admin.projectTemplates.create({
      body: { name: uniqueName("tpl"), type: "secret-manager", ...extra } as never,
    }),
  ).projectTemplate;

describe("PATCH /api/v1/project-templates/:templateId", () => {
  it("updates fields and replaces the member lists that are given", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant);
    const template = await createTemplate(tenant, {
      roles: [readerRole],
      identities: [{ identityId: identity.id, roles: ["reader"] }],
    });
    const res = await tenant.admin.projectTemplates.update({
      params: { templateId: template.id },
      body: {
        name: "renamed-template",
        description: "new",
        environments: [{ name: "Only", slug: "only", position: 1 }],
        projectManagedIdentities: [{ name: "bot", roles: ["viewer"] }],
      },
    });
    expect(res.status).toBe(200);
    expect(expectOk(res).projectTemplate).toMatchObject({
      name: "renamed-template",
      description: "new",
      environments: [{ slug: "only" }],
      identities: [{ identityId: identity.id, roles: ["reader"] }],
      projectManagedIdentities: [{ name: "bot", roles: ["viewer"] }],
    });
    const cleared = expectOk(
      await tenant.admin.projectTemplates.update({
        params: { templateId: template.id },
        body: { identities: null, roles: [], projectManagedIdentities: null },
      }),
    ).projectTemplate;
    expect(cleared).toMatchObject({ identities: [], projectManagedIdentities: null });
    expect(cleared.roles.map((r) => r.slug)).toEqual(["admin", "member", "viewer", "no-access"]);
  });

  it("answers 400 for roles still in use, removed environments, taken names and the default template", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant);
    const template = await createTemplate(tenant, {
      roles: [readerRole],
      identities: [{ identityId: identity.id, roles: ["reader"] }],
      projectManagedIdentities: [{ name: "ci", roles: ["reader"] }],
    });
    const other = await createTemplate(tenant);
    const pki = await createTemplate(tenant, { type: "cert-manager" });
    const cases: [string, Record<string, unknown>, string][] = [
      [template.id, { roles: [] }, 'Cannot remove role "reader" because it is assigned to 2 identities'],
      [template.id, { environments: null }, "Environments cannot be removed for SecretManager project templates"],
      [
        pki.id,
        { environments: [{ name: "A", slug: "a", position: 1 }] },
        "Cannot configure environments for non-SecretManager project templates",
      ],
      [template.id, { name: other.name }, `A project template with the name "${other.name}" already exists.`],
      [DEFAULT_ID, { description: "x" }, "The default project template cannot be updated"],
      [
        template.id,
        { users: [{ username: "ghost@keyward.test", roles: ["viewer"] }] },
        "The following users are not members of this organization: ghost@keyward.test",
      ],
    ];
    for (const [templateId, body, message] of cases) {
      const res = await tenant.admin.projectTemplates.update({ params: { templateId }, body: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ message });
    }
  });

  it("answers 404, 403, 401 and 422", async () => {
    const tenant = await createTenant();
    const template = await createTemplate(tenant);
    expect(
      (await tenant.admin.projectTemplates.update({ params: { templateId: randomUUID() }, body: { description: "x" } }))
        .status,
    ).toBe(404);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.projectTemplates.update({
      params: { templateId: template.id },
      body: { description: "x" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit on project-templates" });
    expect(
      (await tenant.anonymous.projectTemplates.update({ params: { templateId: template.id }, body: {} })).status,
    ).toBe(401);
    expect(
      (await tenant.admin.projectTemplates.update({ params: { templateId: template.id }, body: { name: "default" } }))
        .status,
    ).toBe(422);
  });
});

describe("DELETE /api/v1/project-templates/:templateId", () => {
  it("deletes a template and returns it; 404 after, 400 for the default, 403 and 401", async () => {
    const tenant = await createTenant();
    const template = await createTemplate(tenant);
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.projectTemplates.delete({ params: { templateId: template.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to delete on project-templates" });
    expect((await tenant.anonymous.projectTemplates.delete({ params: { templateId: template.id } })).status).toBe(401);
    const res = await tenant.admin.projectTemplates.delete({ params: { templateId: template.id } });
    expect(res.status).toBe(200);
    expect(expectOk(res).projectTemplate).toEqual(template);
    expect((await tenant.admin.projectTemplates.delete({ params: { templateId: template.id } })).status).toBe(404);
    const builtIn = await tenant.admin.projectTemplates.delete({ params: { templateId: DEFAULT_ID } });
    expect(builtIn.status).toBe(400);
    expect(builtIn.body).toMatchObject({ message: "The default project template cannot be deleted" });
  });
});
