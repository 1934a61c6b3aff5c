import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { MembershipRoleSchema, RoleAssignmentsInputSchema } from "./roles.schema";

const c = initContract();

/** An organization group; its responses are not wrapped, as in the reference. */
export const GroupSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string(),
  slug: z.string(),
  role: z.string(),
  roleId: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Group = z.infer<typeof GroupSchema>;

export const GroupUserSchema = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
});

const GroupName = z.string().trim().min(1).max(50);
const GroupSlug = slugSchema({ min: 5, max: 36 });
const OrgRole = z.string().trim().min(1).max(64);
const GroupParams = z.object({ id: z.string().trim().min(1).max(64) });
const MembersQuery = {
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(10),
  search: z.string().trim().max(64).optional(),
  filter: z.enum(["existingMembers", "nonMembers"]).optional(),
};

export const groupsContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/groups",
    body: z.object({ name: GroupName, slug: GroupSlug.optional(), role: OrgRole.default("no-access") }),
    responses: { 200: GroupSchema },
    summary: "Create an organization group",
  },
  list: {
    method: "GET",
    path: "/api/v1/groups",
    responses: { 200: z.array(GroupSchema) },
    summary: "The organization's groups",
  },
  get: {
    method: "GET",
    path: "/api/v1/groups/:id",
    pathParams: GroupParams,
    responses: { 200: GroupSchema.extend({ customRoleSlug: z.string().nullable() }) },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/groups/:id",
    pathParams: GroupParams,
    body: z.object({ name: GroupName.optional(), slug: GroupSlug.optional(), role: OrgRole.optional() }),
    responses: { 200: GroupSchema },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/groups/:id",
    pathParams: GroupParams,
    body: c.noBody(),
    responses: { 200: GroupSchema },
  },
  listUsers: {
    method: "GET",
    path: "/api/v1/groups/:id/users",
    pathParams: GroupParams,
    query: z.object({ ...MembersQuery, username: z.string().trim().max(255).optional() }),
    responses: {
      200: z.object({
        users: z.array(
          GroupUserSchema.extend({ isPartOfGroup: z.boolean(), joinedGroupAt: TimestampSchema.nullable() }),
        ),
        totalCount: z.number().int(),
      }),
    },
    summary: "The organization's users, each marked with whether it belongs to the group",
  },
  addUser: {
    method: "POST",
    path: "/api/v1/groups/:id/users/:username",
    pathParams: GroupParams.extend({ username: z.string().trim().min(1).max(255) }),
    body: c.noBody(),
    responses: { 200: GroupUserSchema },
  },
  removeUser: {
    method: "DELETE",
    path: "/api/v1/groups/:id/users/:username",
    pathParams: GroupParams.extend({ username: z.string().trim().min(1).max(255) }),
    body: c.noBody(),
    responses: { 200: GroupUserSchema },
  },
  listIdentities: {
    method: "GET",
    path: "/api/v1/groups/:id/machine-identities",
    pathParams: GroupParams,
    query: z.object(MembersQuery),
    responses: {
      200: z.object({
        machineIdentities: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            isPartOfGroup: z.boolean(),
            joinedGroupAt: TimestampSchema.nullable(),
          }),
        ),
        totalCount: z.number().int(),
      }),
    },
    summary: "The organization's identities, each marked with whether it belongs to the group",
  },
  addIdentity: {
    method: "POST",
    path: "/api/v1/groups/:id/machine-identities/:machineIdentityId",
    pathParams: GroupParams.extend({ machineIdentityId: z.string().trim().min(1).max(64) }),
    body: c.noBody(),
    responses: { 200: z.object({ id: z.string() }) },
  },
  removeIdentity: {
    method: "DELETE",
    path: "/api/v1/groups/:id/machine-identities/:machineIdentityId",
    pathParams: GroupParams.extend({ machineIdentityId: z.string().trim().min(1).max(64) }),
    body: c.noBody(),
    responses: { 200: z.object({ id: z.string() }) },
  },
});

/** A custom role shows as `custom` with its customRole* fields; group roles carry no timestamps. */
export const GroupMembershipRoleSchema = MembershipRoleSchema.omit({ createdAt: true, updatedAt: true });

export const ProjectGroupMembershipSchema = z.object({
  id: z.string(),
  groupId: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  roles: z.array(GroupMembershipRoleSchema),
  group: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
});
export type ProjectGroupMembership = z.infer<typeof ProjectGroupMembershipSchema>;

const GroupMembershipRowSchema = z.object({
  id: z.string(),
  groupId: z.string(),
  projectId: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

const ProjectParams = z.object({ projectId: z.string().trim().min(1).max(64) });

export const projectGroupsContract = c.router({
  add: {
    method: "POST",
    path: "/api/v1/projects/:projectId/groups/:groupIdOrName",
    pathParams: ProjectParams.extend({ groupIdOrName: z.string().trim().min(1).max(64) }),
    body: z.object({
      role: z.string().trim().min(1).max(64).default("no-access"),
      roles: RoleAssignmentsInputSchema.optional(),
    }),
    responses: { 200: z.object({ groupMembership: GroupMembershipRowSchema }) },
    summary: "Add a group to a project with roles (temporary roles allowed)",
  },
  list: {
    method: "GET",
    path: "/api/v1/projects/:projectId/groups",
    pathParams: ProjectParams,
    responses: { 200: z.object({ groupMemberships: z.array(ProjectGroupMembershipSchema) }) },
    summary: "The groups of a project with their roles",
  },
  get: {
    method: "GET",
    path: "/api/v1/projects/:projectId/groups/:groupId",
    pathParams: ProjectParams.extend({ groupId: z.string().trim().min(1).max(64) }),
    responses: { 200: z.object({ groupMembership: ProjectGroupMembershipSchema }) },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/projects/:projectId/groups/:groupId",
    pathParams: ProjectParams.extend({ groupId: z.string().trim().min(1).max(64) }),
    body: z.object({ roles: RoleAssignmentsInputSchema }),
    responses: { 200: z.object({ roles: z.array(GroupMembershipRoleSchema) }) },
  },
  remove: {
    method: "DELETE",
    path: "/api/v1/projects/:projectId/groups/:groupId",
    pathParams: ProjectParams.extend({ groupId: z.string().trim().min(1).max(64) }),
    body: c.noBody(),
    responses: { 200: z.object({ groupMembership: GroupMembershipRowSchema }) },
  },
});
