import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";
import { EnvironmentSlugInput, ProjectIdInput } from "./folders.contract";
import {
  AccessApprovalPrincipalInputSchema,
  EnforcementLevelSchema,
  type AccessApprovalPrincipalInput,
} from "./access-approvals.contract";

const c = initContract();

/** Who may approve or bypass: the same principals as access requests name. */
export const ApprovalPrincipalInputSchema = AccessApprovalPrincipalInputSchema;
export type ApprovalPrincipalInput = AccessApprovalPrincipalInput;

export const ApprovalPrincipalSchema = z.object({
  type: z.enum(["user", "group", "identity"]),
  id: z.string(),
  name: z.string().optional(),
});

/** A folder path or a glob of folder paths (`/apps/**`). */
const PolicyPathInput = z.string().trim().min(1, "Secret path cannot be empty").max(512);

const EnvironmentRefSchema = z.object({ id: z.string(), slug: z.string(), name: z.string() });

export const SecretApprovalPolicySchema = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  approvals: z.number(),
  secretPath: z.string(),
  envId: z.string(),
  environment: EnvironmentRefSchema,
  environments: z.array(EnvironmentRefSchema),
  enforcementLevel: EnforcementLevelSchema,
  allowedSelfApprovals: z.boolean(),
  bypassForMachineIdentities: z.boolean(),
  approvers: z.array(ApprovalPrincipalSchema),
  bypassers: z.array(ApprovalPrincipalSchema),
  deletedAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type SecretApprovalPolicy = z.infer<typeof SecretApprovalPolicySchema>;

const policyFields = {
  name: z.string().trim().min(1).max(64).optional(),
  secretPath: PolicyPathInput,
  approvers: z.array(ApprovalPrincipalInputSchema).min(1).max(100),
  bypassers: z.array(ApprovalPrincipalInputSchema).max(100).optional(),
  approvals: z.number().int().min(1).max(100).default(1),
  enforcementLevel: EnforcementLevelSchema.default("hard"),
  allowedSelfApprovals: z.boolean().default(false),
  bypassForMachineIdentities: z.boolean().default(false),
  environment: EnvironmentSlugInput.optional(),
  environments: z.array(EnvironmentSlugInput).min(1).max(50).optional(),
};

const PolicyIdParam = z.object({ policyId: z.string().trim().min(1).max(64) });
const policyBody = z.object({ approval: SecretApprovalPolicySchema });

export const secretApprovalPoliciesContract = c.router(
  {
    create: {
      method: "POST",
      path: "/",
      body: z
        .object({ projectId: ProjectIdInput.optional(), workspaceId: ProjectIdInput.optional(), ...policyFields })
        .refine((b) => b.environment !== undefined || (b.environments?.length ?? 0) > 0, {
          message: "At least one environment should be provided",
          path: ["environments"],
        }),
      responses: { 200: policyBody },
      summary: "Protect an environment's folders: writes there become change requests",
    },
    list: {
      method: "GET",
      path: "/",
      query: z.object({ projectId: ProjectIdInput.optional(), workspaceId: ProjectIdInput.optional() }),
      responses: { 200: z.object({ approvals: z.array(SecretApprovalPolicySchema) }) },
      summary: "The change policies of a project",
    },
    board: {
      method: "GET",
      path: "/board",
      query: z.object({
        projectId: ProjectIdInput.optional(),
        workspaceId: ProjectIdInput.optional(),
        environment: EnvironmentSlugInput,
        secretPath: z.string().trim().min(1).max(512),
      }),
      responses: { 200: z.object({ policy: SecretApprovalPolicySchema.nullable() }) },
      summary: "The change policy that applies to a folder, if any",
    },
    get: {
      method: "GET",
      path: "/:policyId",
      pathParams: PolicyIdParam,
      responses: { 200: policyBody },
      summary: "A change policy",
    },
    update: {
      method: "PATCH",
      path: "/:policyId",
      pathParams: PolicyIdParam,
      body: z.object({
        ...policyFields,
        secretPath: PolicyPathInput.optional(),
        approvers: z.array(ApprovalPrincipalInputSchema).min(1).max(100).optional(),
        approvals: z.number().int().min(1).max(100).optional(),
        enforcementLevel: EnforcementLevelSchema.optional(),
        allowedSelfApprovals: z.boolean().optional(),
        bypassForMachineIdentities: z.boolean().optional(),
      }),
      responses: { 200: policyBody },
      summary: "Change a policy: approvers and bypassers are replaced as a whole",
    },
    delete: {
      method: "DELETE",
      path: "/:policyId",
      pathParams: PolicyIdParam,
      body: c.noBody(),
      responses: { 200: policyBody },
      summary: "Retire a policy; its open change requests are closed",
    },
  },
  { pathPrefix: "/api/v2/secret-approvals" },
);

export const ChangeRequestStatusSchema = z.enum(["open", "close"]);
const ReviewStatusSchema = z.enum(["approved", "rejected"]);

export const ChangeRequestCommitSchema = z.object({
  op: z.enum(["create", "update", "delete"]),
  secretKey: z.string(),
  newSecretName: z.string().nullable(),
  secretId: z.string().nullable(),
  /** The version the committer saw; a merge refuses when the secret has moved on. */
  secretVersion: z.number().nullable(),
  /** Shown only to whoever may read the secret's value; otherwise the hidden mask. */
  secretValue: z.string().optional(),
  secretValueHidden: z.boolean(),
  /** Whether the change sets a new value (a change of comment or tags only does not). */
  changesValue: z.boolean(),
  secretComment: z.string().optional(),
  tagIds: z.array(z.string()).nullable(),
  skipMultilineEncoding: z.boolean().nullable(),
});

export const ChangeRequestReviewSchema = z.object({
  reviewerType: z.enum(["user", "identity"]),
  reviewerId: z.string(),
  /** For people, the user id (as Infisical lists reviewers). */
  userId: z.string().nullable(),
  status: ReviewStatusSchema,
  comment: z.string().nullable(),
  createdAt: TimestampSchema,
});

export const ChangeRequestSchema = z.object({
  id: z.string(),
  slug: z.string(),
  projectId: z.string(),
  policyId: z.string(),
  folderId: z.string(),
  environment: z.string(),
  secretPath: z.string(),
  status: ChangeRequestStatusSchema,
  hasMerged: z.boolean(),
  conflicts: z.array(z.object({ secretKey: z.string(), op: z.string(), reason: z.string() })),
  committerType: z.enum(["user", "identity"]),
  committerId: z.string(),
  committerUserId: z.string().nullable(),
  committerIdentityId: z.string().nullable(),
  statusChangedByType: z.string().nullable(),
  statusChangedById: z.string().nullable(),
  bypassReason: z.string().nullable(),
  mergedAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type ChangeRequest = z.infer<typeof ChangeRequestSchema>;

export const ChangeRequestDetailSchema = ChangeRequestSchema.extend({
  policy: SecretApprovalPolicySchema,
  reviewers: z.array(ChangeRequestReviewSchema),
  commits: z.array(ChangeRequestCommitSchema),
  /** How many approving reviews by the policy's approvers the request has. */
  approvalCount: z.number(),
});
export type ChangeRequestDetail = z.infer<typeof ChangeRequestDetailSchema>;

const RequestIdParam = z.object({ requestId: z.string().trim().min(1).max(64) });
const projectQuery = { projectId: ProjectIdInput.optional(), workspaceId: ProjectIdInput.optional() };

export const secretApprovalRequestsContract = c.router(
  {
    list: {
      method: "GET",
      path: "/",
      query: z.object({
        ...projectQuery,
        environment: EnvironmentSlugInput.optional(),
        committer: z.string().trim().max(64).optional(),
        status: ChangeRequestStatusSchema.optional(),
        search: z.string().trim().max(256).optional(),
        /** Only the requests the caller is asked to review. */
        reviewable: z.enum(["true", "false"]).optional(),
        limit: z.coerce.number().int().min(1).max(100).default(20),
        offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      }),
      responses: { 200: z.object({ approvals: z.array(ChangeRequestDetailSchema), totalCount: z.number() }) },
      summary:
        "Change requests of a project (all for readers of approvals, else the caller's own and those they review)",
    },
    count: {
      method: "GET",
      path: "/count",
      query: z.object({ ...projectQuery, policyId: z.string().trim().max(64).optional() }),
      responses: { 200: z.object({ approvals: z.object({ open: z.number(), closed: z.number() }) }) },
      summary: "Open and closed change requests",
    },
    get: {
      method: "GET",
      path: "/:requestId",
      pathParams: RequestIdParam,
      responses: { 200: z.object({ approval: ChangeRequestDetailSchema }) },
      summary: "A change request with its changes (values only for readers) and reviews",
    },
    review: {
      method: "POST",
      path: "/:requestId/review",
      pathParams: RequestIdParam,
      body: z.object({ status: ReviewStatusSchema, comment: z.string().trim().max(1_000).optional() }),
      responses: {
        200: z.object({
          review: z.object({
            id: z.string(),
            requestId: z.string(),
            reviewerUserId: z.string().nullable(),
            reviewerIdentityId: z.string().nullable(),
            status: ReviewStatusSchema,
            comment: z.string().nullable(),
            createdAt: TimestampSchema,
            updatedAt: TimestampSchema,
          }),
        }),
      },
      summary: "Approve or reject an open change request (one review per reviewer; a new one replaces it)",
    },
    status: {
      method: "POST",
      path: "/:requestId/status",
      pathParams: RequestIdParam,
      body: z.object({ status: ChangeRequestStatusSchema }),
      responses: { 200: z.object({ approval: ChangeRequestSchema }) },
      summary: "Close or reopen a change request",
    },
    merge: {
      method: "POST",
      path: "/:requestId/merge",
      pathParams: RequestIdParam,
      body: z.object({ bypassReason: z.string().trim().min(1).max(1_000).optional() }),
      responses: { 200: z.object({ approval: ChangeRequestSchema }) },
      summary: "Apply an approved change request in one transaction (400 when a secret changed since)",
    },
  },
  { pathPrefix: "/api/v1/secret-approval-requests" },
);
