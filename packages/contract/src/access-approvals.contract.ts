import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";
import { EnvironmentSlugInput } from "./folders.contract";
import { PermissionGlobSchema } from "./permission.schema";
import { TemporaryRangeSchema } from "./privilege.schema";

const c = initContract();

const Id = z.string().trim().min(1).max(255);
const ProjectSlug = z.string().trim().min(1).max(64);
const BASE = "/api/v1/access-approvals";

/** A policy's path: a glob that starts with "/". */
const PolicySecretPath = PermissionGlobSchema.refine(
  (v) => v.startsWith("/"),
  "Invalid Secret Path; it must start with a '/'",
);

/**
 * Who approves (or may bypass): a person by id or username, a group by id, or, as Keyward's
 * extension, a machine identity by id.
 */
export const AccessApprovalPrincipalInputSchema = z.union([
  z
    .object({
      type: z.literal("user"),
      id: z.string().uuid().optional(),
      username: z.string().trim().min(1).max(255).optional(),
    })
    .refine((v) => v.id !== undefined || v.username !== undefined, "A user approver needs an id or a username"),
  z.object({ type: z.literal("group"), id: z.string().uuid() }),
  z.object({ type: z.literal("identity"), id: z.string().uuid() }),
]);
export type AccessApprovalPrincipalInput = z.infer<typeof AccessApprovalPrincipalInputSchema>;

const Principals = z.array(AccessApprovalPrincipalInputSchema).max(100);
export const EnforcementLevelSchema = z.enum(["hard", "soft"]);

const PrincipalSchema = z.object({
  type: z.enum(["user", "group", "identity"]),
  id: z.string(),
  /** The person's username, the group's slug or the identity's name. */
  name: z.string().nullable(),
});

const EnvironmentSummary = z.object({ id: z.string(), slug: z.string(), name: z.string() });

export const AccessApprovalPolicySchema = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  secretPath: z.string(),
  approvals: z.number().int(),
  enforcementLevel: EnforcementLevelSchema,
  allowedSelfApprovals: z.boolean(),
  maxTimePeriod: z.string().nullable(),
  /** How long a request may wait for its approvals before it expires; null: as long as its range. */
  requestExpirationTime: z.string().nullable(),
  /** The first environment, as older clients read it. */
  envId: z.string().nullable(),
  environment: EnvironmentSummary.nullable(),
  environments: z.array(EnvironmentSummary),
  approvers: z.array(PrincipalSchema),
  bypassers: z.array(PrincipalSchema),
  deletedAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type AccessApprovalPolicy = z.infer<typeof AccessApprovalPolicySchema>;

const policyFields = {
  name: z.string().trim().min(1).max(128),
  environment: EnvironmentSlugInput,
  environments: z.array(EnvironmentSlugInput).min(1).max(50),
  secretPath: PolicySecretPath,
  approvers: Principals.min(1),
  approvals: z.number().int().min(1).max(100),
  enforcementLevel: EnforcementLevelSchema,
  allowedSelfApprovals: z.boolean(),
  bypassers: Principals,
  maxTimePeriod: TemporaryRangeSchema,
  requestExpirationTime: TemporaryRangeSchema,
};

const PolicyParams = z.object({ policyId: Id });
const PolicyWrapped = z.object({ approval: AccessApprovalPolicySchema });

/** Access approval policies: who approves access requests to which environments and paths. */
export const accessApprovalPoliciesContract = c.router({
  create: {
    method: "POST",
    path: `${BASE}/policies`,
    body: z
      .object({
        projectSlug: ProjectSlug,
        name: policyFields.name.optional(),
        environment: policyFields.environment.optional(),
        environments: policyFields.environments.optional(),
        secretPath: policyFields.secretPath.default("/"),
        approvers: policyFields.approvers,
        approvals: policyFields.approvals.default(1),
        enforcementLevel: policyFields.enforcementLevel.default("hard"),
        allowedSelfApprovals: policyFields.allowedSelfApprovals.default(false),
        bypassers: policyFields.bypassers.optional(),
        maxTimePeriod: policyFields.maxTimePeriod.nullable().optional(),
        requestExpirationTime: policyFields.requestExpirationTime.nullable().optional(),
      })
      .refine((v) => v.environment !== undefined || v.environments !== undefined, {
        message: "An environment or environments is required",
        path: ["environment"],
      }),
    responses: { 200: PolicyWrapped },
    summary: "Create an access approval policy",
  },
  list: {
    method: "GET",
    path: `${BASE}/policies`,
    query: z.object({ projectSlug: ProjectSlug }),
    responses: { 200: z.object({ approvals: z.array(AccessApprovalPolicySchema) }) },
    summary: "The project's access approval policies",
  },
  count: {
    method: "GET",
    path: `${BASE}/policies/count`,
    query: z.object({ projectSlug: ProjectSlug, envSlug: EnvironmentSlugInput }),
    responses: { 200: z.object({ count: z.number().int() }) },
    summary: "How many access approval policies cover an environment",
  },
  get: {
    method: "GET",
    path: `${BASE}/policies/:policyId`,
    pathParams: PolicyParams,
    responses: { 200: PolicyWrapped },
    summary: "One access approval policy",
  },
  update: {
    method: "PATCH",
    path: `${BASE}/policies/:policyId`,
    pathParams: PolicyParams,
    body: z.object({
      name: policyFields.name.optional(),
      environment: policyFields.environment.optional(),
      environments: policyFields.environments.optional(),
      secretPath: policyFields.secretPath.optional(),
      approvers: policyFields.approvers.optional(),
      approvals: policyFields.approvals.optional(),
      enforcementLevel: policyFields.enforcementLevel.optional(),
      allowedSelfApprovals: policyFields.allowedSelfApprovals.optional(),
      bypassers: policyFields.bypassers.optional(),
      /** Omitted keeps the stored one; null removes it. */
      maxTimePeriod: policyFields.maxTimePeriod.nullable().optional(),
      /** Omitted keeps the stored one; null removes it. */
      requestExpirationTime: policyFields.requestExpirationTime.nullable().optional(),
    }),
    responses: { 200: PolicyWrapped },
    summary: "Change an access approval policy",
  },
  delete: {
    method: "DELETE",
    path: `${BASE}/policies/:policyId`,
    pathParams: PolicyParams,
    body: c.noBody(),
    responses: { 200: PolicyWrapped },
    summary:
      "Archive an access approval policy: its pending requests can no longer be reviewed, its approved ones are revoked",
  },
});

// ---- requests ----

const LEGACY_ACTIONS = ["read", "create", "edit", "delete"] as const;

/** `$glob` or a plain path that starts with "/". */
const RequestedPath = z.union([
  z
    .string()
    .min(1)
    .max(512)
    .refine((v) => v.startsWith("/"), "Invalid Secret Path; it must start with a '/'"),
  z
    .object({
      $glob: PermissionGlobSchema.refine((v) => v.startsWith("/"), "Invalid Secret Path; it must start with a '/'"),
    })
    .strict(),
]);

/**
 * One requested rule in the packed array form `[action, subject, conditions]`; the action may list
 * several, comma-separated (`"read,edit"`). Only secrets can be requested.
 */
export const AccessRequestPermissionSchema = z.tuple([
  z
    .string()
    .max(64)
    .refine(
      (v) => v.split(",").every((a) => (LEGACY_ACTIONS as readonly string[]).includes(a.trim())),
      `Action must be one or more of ${LEGACY_ACTIONS.join(", ")}`,
    ),
  z.literal("secrets"),
  z.object({ environment: EnvironmentSlugInput, secretPath: RequestedPath.optional() }).strict(),
]);
export type AccessRequestPermission = z.infer<typeof AccessRequestPermissionSchema>;

export const AccessRequestStatusSchema = z.enum(["pending", "approved", "rejected", "expired", "revoked"]);

const PersonSummary = z.object({
  userId: z.string(),
  email: z.string(),
  username: z.string(),
  firstName: z.string(),
  lastName: z.string(),
});
const IdentitySummary = z.object({ identityId: z.string(), name: z.string() });

const ReviewerSchema = z.object({
  reviewerType: z.enum(["user", "identity"]),
  userId: z.string().nullable(),
  identityId: z.string().nullable(),
  status: z.enum(["approved", "rejected"]),
  bypassReason: z.string().nullable(),
});

export const AccessRequestSchema = z.object({
  id: z.string(),
  /** Null once the policy has been deleted; `policy.deletedAt` then says when. */
  policyId: z.string().nullable(),
  projectId: z.string(),
  status: AccessRequestStatusSchema,
  isApproved: z.boolean(),
  permissions: z.array(AccessRequestPermissionSchema),
  isTemporary: z.boolean(),
  temporaryRange: z.string().nullable(),
  environment: z.string(),
  environmentName: z.string(),
  secretPath: z.string(),
  requesterType: z.enum(["user", "identity"]),
  requestedByUserId: z.string().nullable(),
  requestedByIdentityId: z.string().nullable(),
  requestedByUser: PersonSummary.nullable(),
  requestedByIdentity: IdentitySummary.nullable(),
  privilege: z
    .object({
      id: z.string(),
      membershipId: z.string(),
      isTemporary: z.boolean(),
      temporaryMode: z.string().nullable(),
      temporaryRange: z.string().nullable(),
      temporaryAccessStartTime: TimestampSchema.nullable(),
      temporaryAccessEndTime: TimestampSchema.nullable(),
      permissions: z.array(z.record(z.unknown())),
    })
    .nullable(),
  policy: z.object({
    id: z.string(),
    name: z.string(),
    approvals: z.number().int(),
    approvers: z.array(PrincipalSchema),
    secretPath: z.string(),
    envId: z.string().nullable(),
    enforcementLevel: EnforcementLevelSchema,
    allowedSelfApprovals: z.boolean(),
    deletedAt: TimestampSchema.nullable(),
  }),
  reviewers: z.array(ReviewerSchema),
  approvedAt: TimestampSchema.nullable(),
  revokedAt: TimestampSchema.nullable(),
  revokedByUserId: z.string().nullable(),
  revokedByIdentityId: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type AccessRequest = z.infer<typeof AccessRequestSchema>;

const RequestParams = z.object({ requestId: Id });

/** Access requests: a member asks for temporary access, the policy's approvers grant it. */
export const accessApprovalRequestsContract = c.router({
  create: {
    method: "POST",
    path: `${BASE}/requests`,
    query: z.object({ projectSlug: ProjectSlug }),
    body: z.object({
      permissions: z.array(AccessRequestPermissionSchema).min(1).max(16),
      isTemporary: z.boolean(),
      temporaryRange: TemporaryRangeSchema.optional(),
    }),
    responses: { 200: z.object({ approval: AccessRequestSchema }) },
    summary: "Ask for access under the policy that covers the requested environment and path",
  },
  list: {
    method: "GET",
    path: `${BASE}/requests`,
    query: z.object({
      projectSlug: ProjectSlug,
      authorProjectMembershipId: Id.optional(),
      envSlug: EnvironmentSlugInput.optional(),
      /** Only the requests whose policy names the caller as an approver (whatever they may read). */
      reviewable: z.enum(["true", "false"]).optional(),
    }),
    responses: { 200: z.object({ requests: z.array(AccessRequestSchema) }) },
    summary: "The project's access requests the caller may see",
  },
  count: {
    method: "GET",
    path: `${BASE}/requests/count`,
    query: z.object({ projectSlug: ProjectSlug, envSlug: EnvironmentSlugInput.optional() }),
    responses: { 200: z.object({ pendingCount: z.number().int(), finalizedCount: z.number().int() }) },
    summary: "How many of the visible access requests are pending and how many are closed",
  },
  review: {
    method: "POST",
    path: `${BASE}/requests/:requestId/review`,
    pathParams: RequestParams,
    body: z.object({
      status: z.enum(["approved", "rejected"]),
      bypassReason: z.string().trim().min(1).max(1024).optional(),
    }),
    responses: {
      200: z.object({
        review: z.object({
          id: z.string(),
          requestId: z.string(),
          reviewerType: z.enum(["user", "identity"]),
          userId: z.string().nullable(),
          identityId: z.string().nullable(),
          status: z.enum(["approved", "rejected"]),
          bypassReason: z.string().nullable(),
          createdAt: TimestampSchema,
        }),
      }),
    },
    summary: "Approve or reject an access request; the last approval needed grants the access",
  },
  revoke: {
    method: "POST",
    path: `${BASE}/requests/:requestId/revoke`,
    pathParams: RequestParams,
    body: c.noBody(),
    responses: { 200: z.object({ request: AccessRequestSchema.extend({ privilegeId: z.null() }) }) },
    summary: "End an approved request's access at once",
  },
});
