import { initContract } from "@ts-rest/core";
import { z } from "zod";
// In scope so that declaration files name the rule type here: the client's bundled declarations
// cannot follow the import("…") type the compiler would write otherwise.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
import type { ProjectPermissionRule } from "./permission-rule.types";
import { DateTimeInputSchema, slugSchema } from "./common";
import { ProjectPermissionsInputSchema } from "./permission.schema";
import {
  LegacyPermissionsSchema,
  PrivilegePermissionSchema,
  PrivilegeSchema,
  PrivilegeSummarySchema,
  PrivilegeTypeSchema,
  PrivilegeWithMembershipSchema,
  TemporaryModeSchema,
  TemporaryRangeSchema,
} from "./privilege.schema";

const c = initContract();

const Id = z.string().trim().min(1).max(255);
const PrivilegeSlug = slugSchema({ min: 1, max: 60 });
const V2 = "/api/v2/identity-project-additional-privilege";
const V1 = "/api/v1/additional-privilege/identity";

const privilege = z.object({ privilege: PrivilegeWithMembershipSchema });

/** Additional privileges addressed by id. */
export const privilegesV2Contract = c.router({
  create: {
    method: "POST",
    path: V2,
    body: z.object({
      identityId: Id,
      projectId: Id,
      slug: PrivilegeSlug.optional(),
      permissions: ProjectPermissionsInputSchema,
      type: PrivilegeTypeSchema,
    }),
    responses: { 200: z.object({ privilege: PrivilegeSchema }) },
    summary: "Create an additional privilege for an identity in a project",
  },
  update: {
    method: "PATCH",
    path: `${V2}/:id`,
    pathParams: z.object({ id: Id }),
    body: z.object({
      slug: PrivilegeSlug,
      permissions: ProjectPermissionsInputSchema.optional(),
      type: PrivilegeTypeSchema,
    }),
    responses: { 200: privilege },
  },
  get: {
    method: "GET",
    path: `${V2}/:id`,
    pathParams: z.object({ id: Id }),
    responses: { 200: privilege },
  },
  delete: {
    method: "DELETE",
    path: `${V2}/:id`,
    pathParams: z.object({ id: Id }),
    body: c.noBody(),
    responses: { 200: privilege },
  },
  getBySlug: {
    method: "GET",
    path: `${V2}/slug/:privilegeSlug`,
    pathParams: z.object({ privilegeSlug: Id }),
    query: z.object({ identityId: Id, projectSlug: Id }),
    responses: { 200: privilege },
  },
  list: {
    method: "GET",
    path: V2,
    query: z.object({ identityId: Id, projectId: Id }),
    responses: { 200: z.object({ privileges: z.array(PrivilegeSummarySchema) }) },
  },
});

const v1CreateFields = {
  identityId: Id,
  projectSlug: Id,
  slug: PrivilegeSlug.optional(),
  /** Deprecated in favour of `privilegePermission`. */
  permissions: LegacyPermissionsSchema.optional(),
  privilegePermission: PrivilegePermissionSchema.optional(),
};

const v1Lookup = { identityId: Id, projectSlug: Id };

/** Additional privileges addressed by project slug and privilege slug. */
export const privilegesV1Contract = c.router({
  createPermanent: {
    method: "POST",
    path: `${V1}/permanent`,
    body: z.object(v1CreateFields),
    responses: { 200: privilege },
  },
  createTemporary: {
    method: "POST",
    path: `${V1}/temporary`,
    body: z.object({
      ...v1CreateFields,
      temporaryMode: TemporaryModeSchema,
      temporaryRange: TemporaryRangeSchema,
      temporaryAccessStartTime: DateTimeInputSchema,
    }),
    responses: { 200: privilege },
  },
  update: {
    method: "PATCH",
    path: V1,
    body: z.object({
      privilegeSlug: Id,
      ...v1Lookup,
      privilegeDetails: z.object({
        slug: PrivilegeSlug.optional(),
        permissions: LegacyPermissionsSchema.optional(),
        privilegePermission: PrivilegePermissionSchema.optional(),
        isTemporary: z.boolean().optional(),
        temporaryMode: TemporaryModeSchema.optional(),
        temporaryRange: TemporaryRangeSchema.optional(),
        temporaryAccessStartTime: DateTimeInputSchema.optional(),
      }),
    }),
    responses: { 200: privilege },
  },
  delete: {
    method: "DELETE",
    path: V1,
    body: z.object({ privilegeSlug: Id, ...v1Lookup }),
    responses: { 200: privilege },
  },
  get: {
    method: "GET",
    path: `${V1}/:privilegeSlug`,
    pathParams: z.object({ privilegeSlug: Id }),
    query: z.object(v1Lookup),
    responses: { 200: privilege },
  },
  list: {
    method: "GET",
    path: V1,
    query: z.object(v1Lookup),
    responses: { 200: z.object({ privileges: z.array(PrivilegeWithMembershipSchema) }) },
  },
});

export const privilegesContract = c.router({ v1: privilegesV1Contract, v2: privilegesV2Contract });
