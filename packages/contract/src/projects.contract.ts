import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { MessageSchema, TimestampSchema, slugSchema } from "./common";
import { MembershipRoleSchema, RoleAssignmentsInputSchema } from "./roles.schema";

const c = initContract();

export const ProjectTypeSchema = z.enum([
  "secret-manager",
  "cert-manager",
  "kms",
  "secret-scanning",
  "pam",
  "agent-vault",
  "ssh",
]);
export type ProjectType = z.infer<typeof ProjectTypeSchema>;

export const EnvironmentSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  position: z.number().int(),
  projectId: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

export const ProjectSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  type: ProjectTypeSchema,
  orgId: z.string(),
  environments: z.array(EnvironmentSchema.pick({ id: true, name: true, slug: true, position: true })),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

/** A project list's `type` filter: `all` (what the MCP server sends by default) or absent means every type. */
const ProjectListQuery = z.object({ type: z.union([ProjectTypeSchema, z.literal("all")]).optional() });

/** A slug to look up: any text, so a malformed one is simply not found. */
const ProjectSlugParams = z.object({ slug: z.string().trim().min(1).max(255) });

const CreateProjectBody = z.object({
  projectName: z.string().trim().min(1).max(64),
  projectDescription: z.string().trim().max(256).optional(),
  slug: slugSchema({ min: 5, max: 36 }).optional(),
  type: ProjectTypeSchema.default("secret-manager"),
  template: z.string().trim().min(1).max(64).optional(),
  kmsKeyId: z.string().optional(),
});
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

const ProjectParams = z.object({ projectId: z.string().trim().min(1) });

export const IdentityMembershipSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  projectId: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  roles: z.array(MembershipRoleSchema),
  identity: z.object({ id: z.string(), name: z.string(), authMethods: z.array(z.string()) }),
});

const EnvSlug = slugSchema({ min: 1, max: 64, field: "Environment slug" });

export const projectsContract = c.router({
  createV2: {
    method: "POST",
    path: "/api/v2/workspace",
    body: CreateProjectBody,
    responses: { 200: z.object({ project: ProjectSchema }) },
    summary: "Create a project (legacy path)",
  },
  create: {
    method: "POST",
    path: "/api/v1/projects",
    body: CreateProjectBody,
    responses: { 200: z.object({ project: ProjectSchema }) },
    summary: "Create a project",
  },
  list: {
    method: "GET",
    path: "/api/v1/projects",
    query: ProjectListQuery,
    responses: { 200: z.object({ projects: z.array(ProjectSchema) }) },
    summary: "Projects the caller is a member of",
  },
  /** `infisical init` writes each item's `_id` into .infisical.json; the MCP server filters by `type`. */
  listWorkspaces: {
    method: "GET",
    path: "/api/v1/workspace",
    query: ProjectListQuery,
    responses: { 200: z.object({ workspaces: z.array(ProjectSchema.extend({ _id: z.string() })) }) },
    summary: "Projects the caller is a member of (legacy path)",
  },
  /** The agent's listSecretsByProjectSlug and the operator resolve a slug here. */
  getBySlug: {
    method: "GET",
    path: "/api/v1/projects/slug/:slug",
    pathParams: ProjectSlugParams,
    responses: { 200: ProjectSchema },
    summary: "Read a project by slug; the project is the whole body",
  },
  /** The Kubernetes operator resolves an InfisicalSecret's projectSlug here. */
  getBySlugV2: {
    method: "GET",
    path: "/api/v2/workspace/:slug",
    pathParams: ProjectSlugParams,
    responses: { 200: ProjectSchema },
    summary: "Read a project by slug (legacy path); the project is the whole body",
  },
  get: {
    method: "GET",
    path: "/api/v1/projects/:projectId",
    pathParams: ProjectParams,
    responses: { 200: z.object({ project: ProjectSchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/projects/:projectId",
    pathParams: ProjectParams,
    body: c.noBody(),
    responses: { 200: z.object({ project: ProjectSchema }) },
  },
  /** The CLI looks a project up by id here before dynamic-secret commands. */
  getWorkspace: {
    method: "GET",
    path: "/api/v1/workspace/:projectId",
    pathParams: ProjectParams,
    responses: { 200: z.object({ workspace: ProjectSchema }) },
    summary: "Read a project by id (legacy path)",
  },
  /**
   * The caller's own rules in a project, packed as CASL packs them (`[actions, subject, conditions?,
   * inverted?]`, actions joined by commas, inverted as 1): what a console evaluates to show only what
   * the caller may do. Templated rules come filled in for the caller.
   */
  myPermissions: {
    method: "GET",
    path: "/api/v1/workspace/:projectId/permissions",
    pathParams: ProjectParams,
    responses: {
      200: z.object({
        data: z.object({
          permissions: z.array(z.array(z.unknown())),
          membership: z.object({ id: z.string(), projectId: z.string() }),
        }),
      }),
    },
    summary: "The caller's own permissions in a project (packed rules)",
  },
  createEnvironment: {
    method: "POST",
    path: "/api/v1/workspace/:projectId/environments",
    pathParams: ProjectParams,
    body: z.object({
      name: z.string().trim().min(1).max(64),
      slug: EnvSlug,
      position: z.number().int().min(1).optional(),
    }),
    responses: { 200: MessageSchema.extend({ environment: EnvironmentSchema }) },
  },
  listEnvironments: {
    method: "GET",
    path: "/api/v1/workspace/:projectId/environments",
    pathParams: ProjectParams,
    responses: { 200: z.object({ environments: z.array(EnvironmentSchema) }) },
  },
  updateEnvironment: {
    method: "PATCH",
    path: "/api/v1/workspace/:projectId/environments/:environmentId",
    pathParams: ProjectParams.extend({ environmentId: z.string().trim().min(1) }),
    body: z.object({
      name: z.string().trim().min(1).max(64).optional(),
      slug: EnvSlug.optional(),
      position: z.number().int().min(1).optional(),
    }),
    responses: { 200: MessageSchema.extend({ environment: EnvironmentSchema }) },
  },
  deleteEnvironment: {
    method: "DELETE",
    path: "/api/v1/workspace/:projectId/environments/:environmentId",
    pathParams: ProjectParams.extend({ environmentId: z.string().trim().min(1) }),
    body: c.noBody(),
    responses: { 200: MessageSchema.extend({ environment: EnvironmentSchema }) },
  },
  addIdentityMembership: {
    method: "POST",
    path: "/api/v1/projects/:projectId/memberships/identities/:identityId",
    pathParams: ProjectParams.extend({ identityId: z.string().trim().min(1) }),
    body: z
      .object({ role: z.string().trim().min(1).max(64).optional(), roles: RoleAssignmentsInputSchema.optional() })
      .refine((b) => b.role !== undefined || b.roles !== undefined, "Either role or roles must be present"),
    responses: { 200: z.object({ identityMembership: IdentityMembershipSchema }) },
  },
  getIdentityMembership: {
    method: "GET",
    path: "/api/v1/projects/:projectId/memberships/identities/:identityId",
    pathParams: ProjectParams.extend({ identityId: z.string().trim().min(1) }),
    responses: { 200: z.object({ identityMembership: IdentityMembershipSchema }) },
  },
  listIdentityMemberships: {
    method: "GET",
    path: "/api/v1/projects/:projectId/memberships/identities",
    pathParams: ProjectParams,
    query: z.object({
      offset: z.coerce.number().int().min(0).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(100),
    }),
    responses: {
      200: z.object({ identityMemberships: z.array(IdentityMembershipSchema), totalCount: z.number().int() }),
    },
  },
  updateIdentityMembership: {
    method: "PATCH",
    path: "/api/v1/projects/:projectId/memberships/identities/:identityId",
    pathParams: ProjectParams.extend({ identityId: z.string().trim().min(1) }),
    body: z.object({ roles: RoleAssignmentsInputSchema }),
    responses: { 200: z.object({ roles: z.array(MembershipRoleSchema) }) },
  },
  deleteIdentityMembership: {
    method: "DELETE",
    path: "/api/v1/projects/:projectId/memberships/identities/:identityId",
    pathParams: ProjectParams.extend({ identityId: z.string().trim().min(1) }),
    body: c.noBody(),
    responses: { 200: z.object({ identityMembership: IdentityMembershipSchema }) },
  },
});
