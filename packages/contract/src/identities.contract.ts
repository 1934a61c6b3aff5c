import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { MetadataInputSchema, MetadataSchema, TimestampSchema } from "./common";

const c = initContract();

export const IdentitySchema = z.object({
  id: z.string(),
  name: z.string(),
  orgId: z.string(),
  projectId: z.string().nullable(),
  role: z.string(),
  hasDeleteProtection: z.boolean(),
  authMethods: z.array(z.string()),
  activeLockoutAuthMethods: z.array(z.string()),
  metadata: z.array(MetadataSchema),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Identity = z.infer<typeof IdentitySchema>;

const IdentityName = z.string().trim().min(1).max(64);
const OrgRole = z.string().trim().min(1).max(64);

export const identitiesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/identities",
    body: z.object({
      name: IdentityName,
      organizationId: z.string().trim().min(1),
      role: OrgRole,
      hasDeleteProtection: z.boolean().default(false),
      metadata: MetadataInputSchema.optional(),
    }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
    summary: "Create an organization identity",
  },
  list: {
    method: "GET",
    path: "/api/v1/identities",
    query: z.object({
      orgId: z.string().trim().min(1).optional(),
      offset: z.coerce.number().int().min(0).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(100),
      search: z.string().trim().max(64).optional(),
      /** Keyward: also the identities created inside a project (their `projectId` says which). */
      includeProjectIdentities: z.enum(["true", "false"]).default("false"),
    }),
    responses: { 200: z.object({ identities: z.array(IdentitySchema), totalCount: z.number().int() }) },
    summary:
      "List the organization's identities (with includeProjectIdentities=true, also those created inside its projects)",
  },
  get: {
    method: "GET",
    path: "/api/v1/identities/:identityId",
    pathParams: z.object({ identityId: z.string().trim().min(1) }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/identities/:identityId",
    pathParams: z.object({ identityId: z.string().trim().min(1) }),
    body: z.object({
      name: IdentityName.optional(),
      role: OrgRole.optional(),
      hasDeleteProtection: z.boolean().optional(),
      metadata: MetadataInputSchema.optional(),
    }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/identities/:identityId",
    pathParams: z.object({ identityId: z.string().trim().min(1) }),
    body: c.noBody(),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
});

export const projectIdentitiesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/projects/:projectId/identities",
    pathParams: z.object({ projectId: z.string().trim().min(1) }),
    body: z.object({
      name: IdentityName,
      hasDeleteProtection: z.boolean().default(false),
      metadata: MetadataInputSchema.optional(),
    }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
    summary: "Create an identity owned by the project",
  },
  list: {
    method: "GET",
    path: "/api/v1/projects/:projectId/identities",
    pathParams: z.object({ projectId: z.string().trim().min(1) }),
    query: z.object({
      offset: z.coerce.number().int().min(0).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(20),
      search: z.string().trim().max(64).optional(),
    }),
    responses: { 200: z.object({ identities: z.array(IdentitySchema), totalCount: z.number().int() }) },
  },
  get: {
    method: "GET",
    path: "/api/v1/projects/:projectId/identities/:identityId",
    pathParams: z.object({ projectId: z.string().trim().min(1), identityId: z.string().trim().min(1) }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/projects/:projectId/identities/:identityId",
    pathParams: z.object({ projectId: z.string().trim().min(1), identityId: z.string().trim().min(1) }),
    body: z.object({
      name: IdentityName.optional(),
      hasDeleteProtection: z.boolean().optional(),
      metadata: MetadataInputSchema.optional(),
    }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/projects/:projectId/identities/:identityId",
    pathParams: z.object({ projectId: z.string().trim().min(1), identityId: z.string().trim().min(1) }),
    body: c.noBody(),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
});
