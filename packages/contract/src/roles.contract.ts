import { initContract } from "@ts-rest/core";
import { z } from "zod";
// In scope so that declaration files name the rule type here: the client's bundled declarations
// cannot follow the import("…") type the compiler would write otherwise.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
import type { ProjectPermissionRule } from "./permission-rule.types";
import { TimestampSchema, slugSchema } from "./common";
import { PermissionRuleSchema, ProjectPermissionsInputSchema } from "./permission.schema";

const c = initContract();

/** Built-in project role slugs, plus `custom`, which marks a custom role on a membership. */
export const RESERVED_PROJECT_ROLE_SLUGS = ["admin", "member", "viewer", "no-access", "custom"] as const;
const RESERVED_MESSAGE = "Please choose a different slug, the slug you have entered is reserved";

const RoleSlug = slugSchema({ min: 1, max: 64 }).refine(
  (slug) => !(RESERVED_PROJECT_ROLE_SLUGS as readonly string[]).includes(slug),
  RESERVED_MESSAGE,
);

export const ProjectRoleSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  projectId: z.string(),
  permissions: z.array(PermissionRuleSchema),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type ProjectRole = z.infer<typeof ProjectRoleSchema>;

const RoleName = z.string().trim().min(1).max(64);
const RoleDescription = z.string().trim().max(500).nullable();
const ProjectParams = z.object({ projectId: z.string().trim().min(1).max(255) });
const RoleParams = ProjectParams.extend({ roleId: z.string().trim().min(1).max(255) });
const role = z.object({ role: ProjectRoleSchema });

/** Custom project roles; built-in roles are listed and readable but never written. */
export const rolesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/projects/:projectId/roles",
    pathParams: ProjectParams,
    body: z.object({
      slug: RoleSlug,
      name: RoleName,
      description: RoleDescription.optional(),
      permissions: ProjectPermissionsInputSchema,
    }),
    responses: { 200: role },
    summary: "Create a custom project role",
  },
  list: {
    method: "GET",
    path: "/api/v1/projects/:projectId/roles",
    pathParams: ProjectParams,
    responses: { 200: z.object({ roles: z.array(ProjectRoleSchema) }) },
    summary: "Built-in and custom roles of a project",
  },
  getBySlug: {
    method: "GET",
    path: "/api/v1/projects/:projectId/roles/slug/:roleSlug",
    pathParams: ProjectParams.extend({ roleSlug: z.string().trim().min(1).max(255) }),
    responses: { 200: role },
  },
  get: {
    method: "GET",
    path: "/api/v1/projects/:projectId/roles/:roleId",
    pathParams: RoleParams,
    responses: { 200: role },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/projects/:projectId/roles/:roleId",
    pathParams: RoleParams,
    body: z.object({
      slug: RoleSlug.optional(),
      name: RoleName.optional(),
      description: RoleDescription.optional(),
      permissions: ProjectPermissionsInputSchema.optional(),
    }),
    responses: { 200: role },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/projects/:projectId/roles/:roleId",
    pathParams: RoleParams,
    body: c.noBody(),
    responses: { 200: role },
  },
});
