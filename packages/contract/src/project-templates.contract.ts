import { initContract } from "@ts-rest/core";
import { z } from "zod";
// In scope so that declaration files name the rule type here: the client's bundled declarations
// cannot follow the import("…") type the compiler would write otherwise.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
import type { ProjectPermissionRule } from "./permission-rule.types";
import { TimestampSchema, slugSchema } from "./common";
import { BUILT_IN_PROJECT_ROLES } from "./permission-catalog";
import { PermissionRuleSchema, ProjectPermissionsInputSchema } from "./permission.schema";
import { ProjectTypeSchema } from "./projects.contract";

const c = initContract();

/** The built-in template every organization has; it is never stored and cannot be changed. */
export const DEFAULT_PROJECT_TEMPLATE_NAME = "default";
export const DEFAULT_PROJECT_TEMPLATE_ID = "b11b49a9-09a9-4443-916a-4246f9ff2c69";

const MAX_JSON_BYTES = 32_768;
const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

const RESERVED_ROLE_SLUGS = new Set<string>([
  ...BUILT_IN_PROJECT_ROLES,
  "custom",
  "ssh-host-bootstrapper",
  "cryptographic-operator",
]);
const RESERVED_ROLE_NAMES = new Set(["custom", "admin", "viewer", "member", "no access"]);

const RoleSlugs = z.array(z.string().trim().min(1).max(64)).min(1).max(32);

const unique = <T>(values: T[]) => new Set(values).size === values.length;
const sizeCheck = (value: unknown, ctx: z.RefinementCtx) => {
  if (jsonBytes(value) > MAX_JSON_BYTES) ctx.addIssue({ code: z.ZodIssueCode.custom, message: "Size limit exceeded" });
};

const TemplateRoles = z
  .array(
    z.object({
      name: z.string().trim().min(1).max(64),
      slug: slugSchema({ max: 32 }),
      permissions: ProjectPermissionsInputSchema,
    }),
  )
  .max(64)
  .superRefine((roles, ctx) => {
    if (roles.length === 0) return;
    sizeCheck(roles, ctx);
    if (!unique(roles.map((r) => r.slug)))
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "Role slugs must be unique" });
    if (!unique(roles.map((r) => r.name)))
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "Role names must be unique" });
    for (const role of roles) {
      if (RESERVED_ROLE_SLUGS.has(role.slug))
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `Role slug "${role.slug}" is reserved` });
      if (RESERVED_ROLE_NAMES.has(role.name.toLowerCase())) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `Role name "${role.name}" is reserved` });
      }
    }
  });

const TemplateEnvironments = z
  .array(
    z.object({
      name: z.string().trim().min(1).max(64),
      slug: slugSchema({ max: 32 }),
      position: z.number().int().min(1),
    }),
  )
  .max(64)
  .superRefine((environments, ctx) => {
    sizeCheck(environments, ctx);
    if (!unique(environments.map((e) => e.name)))
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "Environment names must be unique" });
    if (!unique(environments.map((e) => e.slug)))
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "Environment slugs must be unique" });
    const positions = environments.map((e) => e.position);
    if (positions.some((p) => p > environments.length) || !unique(positions)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: "One or more of the positions specified is invalid. Positions must be sequential starting from 1.",
      });
    }
  });

const listWithUniqueKey = <T extends z.ZodRawShape>(
  shape: T,
  key: (item: z.infer<z.ZodObject<T>>) => string,
  message: string,
) =>
  z
    .array(z.object(shape))
    .max(256)
    .superRefine((items, ctx) => {
      sizeCheck(items, ctx);
      if (!unique(items.map(key))) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
    });

const TemplateUsers = listWithUniqueKey(
  { username: z.string().trim().min(1).max(255).toLowerCase(), roles: RoleSlugs },
  (u) => u.username,
  "Usernames must be unique",
);
const TemplateGroups = listWithUniqueKey(
  { groupSlug: z.string().trim().min(1).max(64).toLowerCase(), roles: RoleSlugs },
  (g) => g.groupSlug,
  "Group slugs must be unique",
);
const TemplateIdentities = listWithUniqueKey(
  { identityId: z.string().uuid(), roles: RoleSlugs },
  (i) => i.identityId,
  "Identity IDs must be unique",
);
const TemplateManagedIdentities = listWithUniqueKey(
  { name: z.string().trim().min(1).max(64), roles: RoleSlugs },
  (i) => i.name,
  "Identity names must be unique",
);

const TemplateName = slugSchema({ field: "name", max: 64 }).refine(
  (name) => name !== DEFAULT_PROJECT_TEMPLATE_NAME,
  "The requested project template name is reserved.",
);

/** Users may name only built-in roles or the template's own roles (checked on the whole body). */
const checkUserRoles = (
  body: { users?: { username: string; roles: string[] }[] | null; roles?: { slug: string }[] },
  ctx: z.RefinementCtx,
) => {
  if (!body.users?.length || !body.roles) return;
  const available = new Set<string>([...BUILT_IN_PROJECT_ROLES, ...body.roles.map((r) => r.slug)]);
  for (const user of body.users) {
    for (const role of user.roles) {
      if (!available.has(role)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `User "${user.username}" references invalid role slug "${role}". Role must be a predefined role or defined in the template roles.`,
        });
      }
    }
  }
};

const CreateTemplateBody = z
  .object({
    name: TemplateName,
    description: z.string().trim().max(256).optional(),
    type: ProjectTypeSchema,
    roles: TemplateRoles.default([]),
    environments: TemplateEnvironments.nullish(),
    users: TemplateUsers.default([]),
    groups: TemplateGroups.default([]),
    identities: TemplateIdentities.default([]),
    projectManagedIdentities: TemplateManagedIdentities.default([]),
  })
  .superRefine(checkUserRoles);
export type CreateProjectTemplateBody = z.infer<typeof CreateTemplateBody>;

const UpdateTemplateBody = z
  .object({
    name: TemplateName.optional(),
    description: z.string().trim().max(256).optional(),
    roles: TemplateRoles.optional(),
    environments: TemplateEnvironments.nullish(),
    users: TemplateUsers.nullish(),
    groups: TemplateGroups.nullish(),
    identities: TemplateIdentities.nullish(),
    projectManagedIdentities: TemplateManagedIdentities.nullish(),
  })
  .superRefine(checkUserRoles);
export type UpdateProjectTemplateBody = z.infer<typeof UpdateTemplateBody>;

const RoleList = z.array(z.string());

export const ProjectTemplateSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: ProjectTypeSchema,
  roles: z.array(z.object({ name: z.string(), slug: z.string(), permissions: z.array(PermissionRuleSchema) })),
  environments: z.array(z.object({ name: z.string(), slug: z.string(), position: z.number().int() })).nullable(),
  users: z.array(z.object({ username: z.string(), roles: RoleList })).nullable(),
  groups: z.array(z.object({ groupSlug: z.string(), roles: RoleList })).nullable(),
  identities: z.array(z.object({ identityId: z.string(), identityName: z.string(), roles: RoleList })).nullable(),
  projectManagedIdentities: z.array(z.object({ name: z.string(), roles: RoleList })).nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type ProjectTemplate = z.infer<typeof ProjectTemplateSchema>;

const TemplateParams = z.object({ templateId: z.string().trim().min(1).max(64) });
const TemplateResponse = z.object({ projectTemplate: ProjectTemplateSchema });

export const projectTemplatesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/project-templates",
    body: CreateTemplateBody,
    responses: { 200: TemplateResponse },
    summary: "Create a project template",
  },
  list: {
    method: "GET",
    path: "/api/v1/project-templates",
    query: z.object({ type: ProjectTypeSchema.optional() }),
    responses: { 200: z.object({ projectTemplates: z.array(ProjectTemplateSchema) }) },
    summary: "The organization's templates, after the built-in default",
  },
  get: {
    method: "GET",
    path: "/api/v1/project-templates/:templateId",
    pathParams: TemplateParams,
    responses: { 200: TemplateResponse },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/project-templates/:templateId",
    pathParams: TemplateParams,
    body: UpdateTemplateBody,
    responses: { 200: TemplateResponse },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/project-templates/:templateId",
    pathParams: TemplateParams,
    body: c.noBody(),
    responses: { 200: TemplateResponse },
  },
});
