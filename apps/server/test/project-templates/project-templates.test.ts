import type { ProjectPermissionRule } from "@keyward/contract";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { insertOrgUser } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

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

const errorMessages = (body: unknown) =>
  ((body as { message: { message: string }[] }).message ?? []).map((issue) => issue.message);

describe("POST /api/v1/project-templates", () => {
  it("creates a template with roles, environments and members, built-in roles first", async () => {
    const tenant = await createTenant();
    const user = await insertOrgUser(tenant);
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("g") } }));
    const identity = await createIdentity(tenant);
    const res = await tenant.admin.projectTemplates.create({
      body: {
        name: "Backend-Services",
        description: "  for backends  ",
        type: "secret-manager",
        roles: [readerRole],
        environments: [
          { name: "Local", slug: "local", position: 2 },
          { name: "Cloud", slug: "cloud", position: 1 },
        ],
        users: [{ username: user.username.toUpperCase(), roles: ["reader"] }],
        groups: [{ groupSlug: group.slug, roles: ["viewer"] }],
        identities: [{ identityId: identity.id, roles: ["member", "reader"] }],
        projectManagedIdentities: [{ name: "ci", roles: ["reader"] }],
      },
    });
    expect(res.status).toBe(200);
    const template = expectOk(res).projectTemplate;
    expect(template).toMatchObject({
      orgId: tenant.orgId,
      name: "backend-services",
      description: "for backends",
      type: "secret-manager",
      environments: [
        { name: "Local", slug: "local", position: 2 },
        { name: "Cloud", slug: "cloud", position: 1 },
      ],
      users: [{ username: user.username, roles: ["reader"] }],
      groups: [{ groupSlug: group.slug, roles: ["viewer"] }],
      identities: [{ identityId: identity.id, identityName: expect.any(String), roles: ["member", "reader"] }],
      projectManagedIdentities: [{ name: "ci", roles: ["reader"] }],
    });
    expect(template.roles.map((r) => r.slug)).toEqual(["admin", "member", "viewer", "no-access", "reader"]);
    expect(template.roles.at(-1)).toEqual({
      name: "Reader",
      slug: "reader",
      permissions: [{ subject: "secrets", action: ["read"], inverted: false }],
    });
    expect(template.roles[0]!.permissions.length).toBeGreaterThan(10);
  });

  it("fills the default environments for secret managers and none for other types", async () => {
    const tenant = await createTenant();
    const secrets = await createTemplate(tenant);
    expect(secrets.environments!.map((e) => e.slug)).toEqual(["dev", "staging", "prod"]);
    expect(secrets).toMatchObject({
      users: [],
      groups: [],
      identities: [],
      projectManagedIdentities: null,
      description: null,
    });
    const pki = await createTemplate(tenant, { type: "cert-manager" });
    expect(pki.environments).toBeNull();
  });

  it("validates the body as the reference does (422)", async () => {
    const tenant = await createTenant();
    const body = { name: "valid-name", type: "secret-manager" };
    const cases: [Record<string, unknown>, string | undefined][] = [
      [{ ...body, name: "default" }, "The requested project template name is reserved."],
      [{ ...body, name: "x".repeat(65) }, "name field must be at most 64 characters"],
      [{ ...body, name: "bad name!" }, "name field can only contain letters, numbers, and hyphens"],
      [{ ...body, description: "d".repeat(257) }, undefined],
      [{ ...body, type: "vault" }, undefined],
      [{ ...body, roles: [{ ...readerRole, slug: "admin" }] }, 'Role slug "admin" is reserved'],
      [{ ...body, roles: [{ ...readerRole, name: "No Access" }] }, 'Role name "No Access" is reserved'],
      [{ ...body, roles: [readerRole, { ...readerRole, name: "Other" }] }, "Role slugs must be unique"],
      [{ ...body, roles: [readerRole, { ...readerRole, slug: "other" }] }, "Role names must be unique"],
      [{ ...body, roles: [{ ...readerRole, permissions: [{ subject: "secrets", action: "fly" }] }] }, undefined],
      [{ ...body, roles: [{ ...readerRole, permissions: [{ subject: "secrets", action: [] }] }] }, undefined],
      [{ ...body, roles: [{ ...readerRole, permissions: [{ subject: "nothing", action: "read" }] }] }, undefined],
      [
        {
          ...body,
          roles: [
            { ...readerRole, permissions: [{ subject: "secrets", action: "read", conditions: { unknownKey: "x" } }] },
          ],
        },
        undefined,
      ],
      [
        {
          ...body,
          environments: [
            { name: "A", slug: "a", position: 1 },
            { name: "B", slug: "b", position: 3 },
          ],
        },
        "One or more of the positions specified is invalid. Positions must be sequential starting from 1.",
      ],
      [
        {
          ...body,
          environments: [
            { name: "A", slug: "a", position: 1 },
            { name: "A", slug: "b", position: 2 },
          ],
        },
        "Environment names must be unique",
      ],
      [
        {
          ...body,
          users: [
            { username: "a@x.io", roles: ["viewer"] },
            { username: "A@x.io", roles: ["viewer"] },
          ],
        },
        "Usernames must be unique",
      ],
      [
        { ...body, users: [{ username: "a@x.io", roles: ["ghost"] }] },
        'User "a@x.io" references invalid role slug "ghost". Role must be a predefined role or defined in the template roles.',
      ],
      [{ ...body, users: [{ username: "a@x.io", roles: [] }] }, undefined],
      [
        {
          ...body,
          groups: [
            { groupSlug: "g-one", roles: ["viewer"] },
            { groupSlug: "G-ONE", roles: ["viewer"] },
          ],
        },
        "Group slugs must be unique",
      ],
      [{ ...body, identities: [{ identityId: "not-a-uuid", roles: ["viewer"] }] }, undefined],
      [
        {
          ...body,
          projectManagedIdentities: [
            { name: "ci", roles: ["viewer"] },
            { name: "ci", roles: ["viewer"] },
          ],
        },
        "Identity names must be unique",
      ],
    ];
    for (const [input, message] of cases) {
      const res = await tenant.admin.projectTemplates.create({ body: input as never });
      expect(res.status, JSON.stringify(input)).toBe(422);
      if (message) expect(errorMessages(res.body)).toContain(message);
    }
  });

  it("applies the service rules of the reference (400)", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const foreign = await createIdentity(other);
    const project = await createProject(tenant);
    const owned = expectOk(
      await tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name: "owned" } }),
    ).identity;
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("g") } }));
    const taken = await createTemplate(tenant);
    const body = { name: uniqueName("t"), type: "secret-manager" as const };
    const cases: [Record<string, unknown>, string][] = [
      [
        { ...body, type: "kms", environments: [{ name: "A", slug: "a", position: 1 }] },
        "Cannot configure environments for non-SecretManager project templates",
      ],
      [{ ...body, name: taken.name }, `A project template with the name "${taken.name}" already exists.`],
      [
        { ...body, users: [{ username: "ghost@keyward.test", roles: ["viewer"] }] },
        "The following users are not members of this organization: ghost@keyward.test",
      ],
      [
        { ...body, groups: [{ groupSlug: "no-such-group", roles: ["viewer"] }] },
        "The following groups do not exist in this organization: no-such-group",
      ],
      [
        { ...body, identities: [{ identityId: foreign.id, roles: ["viewer"] }] },
        `The following identities do not exist in this organization: ${foreign.id}`,
      ],
      [
        { ...body, identities: [{ identityId: owned.id, roles: ["viewer"] }] },
        `The following identities do not exist in this organization: ${owned.id}`,
      ],
      [
        { ...body, groups: [{ groupSlug: group.slug, roles: ["ghost"] }] },
        `Group "${group.slug}" references invalid role slug "ghost". Role must be a predefined role or defined in the template roles.`,
      ],
      [
        {
          ...body,
          projectManagedIdentities: [
            { name: "CI", roles: ["viewer"] },
            { name: "ci", roles: ["viewer"] },
          ],
        },
        "Project-managed identity names must be unique within the template",
      ],
      [
        { ...body, roles: [{ ...readerRole, permissions: [{ subject: "secrets", action: ["read", "readValue"] }] }] },
        "You have selected Read, and Read Value. You cannot select Read Value or Describe Secret if you have selected Read. The Read permission is a legacy action which has been replaced by Describe Secret and Read Value.",
      ],
      [
        { ...body, projectManagedIdentities: [{ name: "ci", roles: ["ghost"] }] },
        'Identity "ci" references invalid role slug "ghost". Role must be a predefined role or defined in the template roles.',
      ],
    ];
    for (const [input, message] of cases) {
      const res = await tenant.admin.projectTemplates.create({ body: input as never });
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: "BadRequest", message });
    }
  });

  it("needs org create on project-templates (403) and a token (401)", async () => {
    const tenant = await createTenant();
    const member = await createIdentity(tenant, { orgRole: "member" });
    const denied = await member.client.projectTemplates.create({ body: { name: "x-tpl", type: "secret-manager" } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on project-templates",
    });
    expect(
      (await tenant.anonymous.projectTemplates.create({ body: { name: "x-tpl", type: "secret-manager" } })).status,
    ).toBe(401);
  });
});

describe("GET /api/v1/project-templates", () => {
  it("lists the built-in default templates first, then the organization's own", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const mine = await createTemplate(tenant);
    const kms = await createTemplate(tenant, { type: "kms" });
    await createTemplate(other);
    const all = expectOk(await tenant.admin.projectTemplates.list({ query: {} })).projectTemplates;
    const defaults = all.filter((t) => t.id === DEFAULT_ID);
    expect(defaults.map((t) => t.type)).toEqual([
      "secret-manager",
      "cert-manager",
      "kms",
      "secret-scanning",
      "pam",
      "agent-vault",
      "ssh",
    ]);
    expect(defaults[0]).toMatchObject({
      name: "default",
      users: null,
      groups: null,
      identities: null,
      projectManagedIdentities: null,
    });
    expect(defaults[0]!.environments!.map((e) => e.slug)).toEqual(["dev", "staging", "prod"]);
    expect(all.filter((t) => t.id !== DEFAULT_ID).map((t) => t.id)).toEqual([mine.id, kms.id]);
    const onlyKms = expectOk(await tenant.admin.projectTemplates.list({ query: { type: "kms" } })).projectTemplates;
    expect(onlyKms.map((t) => [t.name, t.type])).toEqual([
      ["default", "kms"],
      [kms.name, "kms"],
    ]);
    // Reading templates is the admin's (and a custom role's), as in Infisical: the org member role has none.
    const member = await createIdentity(tenant, { orgRole: "member" });
    expect((await member.client.projectTemplates.list({ query: {} })).status).toBe(403);
    const none = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await none.client.projectTemplates.list({ query: {} })).status).toBe(403);
    expect((await tenant.anonymous.projectTemplates.list({ query: {} })).status).toBe(401);
    expect((await tenant.admin.projectTemplates.list({ query: { type: "nope" } as never })).status).toBe(422);
  });
});

describe("GET /api/v1/project-templates/:templateId", () => {
  it("reads a template of the organization, 404 otherwise, 403 without read, 401", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const template = await createTemplate(tenant, { roles: [readerRole] });
    const res = await tenant.admin.projectTemplates.get({ params: { templateId: template.id } });
    expect(res.status).toBe(200);
    expect(expectOk(res).projectTemplate).toEqual(template);
    const foreign = await createTemplate(other);
    for (const templateId of [foreign.id, randomUUID(), "nope", DEFAULT_ID]) {
      const missing = await tenant.admin.projectTemplates.get({ params: { templateId } });
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ message: `Could not find project template with ID ${templateId}` });
    }
    const none = await createIdentity(tenant, { orgRole: "no-access" });
    expect((await none.client.projectTemplates.get({ params: { templateId: template.id } })).status).toBe(403);
    expect((await tenant.anonymous.projectTemplates.get({ params: { templateId: template.id } })).status).toBe(401);
  });
});
