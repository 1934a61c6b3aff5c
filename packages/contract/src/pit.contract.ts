import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";
import {
  EnvironmentSlugInput,
  FolderNameSchema,
  PROJECT_REF_MESSAGE,
  ProjectIdInput,
  SecretPathSchema,
  hasProjectRef,
  projectRefFields,
} from "./folders.contract";
import { ChangeRequestSchema } from "./secret-approvals.contract";
import {
  BatchCreateItemSchema,
  BatchUpdateItemSchema,
  MAX_SECRETS_PER_BATCH,
  SecretNameSchema,
} from "./secrets.schema";
import { SecretVersionSchema } from "./secret-versions.contract";

const c = initContract();

const CommitIdParam = z.object({ commitId: z.string().trim().min(1).max(64) });
const booleanString = z
  .enum(["true", "false"])
  .default("false")
  .transform((v) => v === "true");

/**
 * A folder named as clients name it: newer ones send the environment slug `environment`, older ones
 * `envId`; the project by `projectId` or `workspaceId`.
 */
const placeFields = {
  ...projectRefFields,
  environment: EnvironmentSlugInput.optional(),
  envId: ProjectIdInput.optional(),
};
const hasEnvironment = (value: { environment?: string; envId?: string }) =>
  value.environment !== undefined || value.envId !== undefined;
const ENVIRONMENT_MESSAGE = "Either environment or envId must be provided";

const folderQuery = z
  .object({ ...placeFields, path: SecretPathSchema.default("/") })
  .refine(hasProjectRef, PROJECT_REF_MESSAGE)
  .refine(hasEnvironment, ENVIRONMENT_MESSAGE);

const projectQuery = z.object(projectRefFields).refine(hasProjectRef, PROJECT_REF_MESSAGE);

export const CommitActorSchema = z.object({ id: z.string().optional(), name: z.string().optional() });

/** One transaction's writes to one folder. `commitId` is its place in the order of commits. */
export const FolderCommitSchema = z.object({
  id: z.string(),
  commitId: z.string(),
  folderId: z.string(),
  envId: z.string(),
  actorType: z.string(),
  actorMetadata: CommitActorSchema,
  message: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  /** Keyward: how many secrets and subfolders the commit changed. */
  changesCount: z.number().int(),
  isLatest: z.boolean(),
});
export type FolderCommit = z.infer<typeof FolderCommitSchema>;

/** A secret's content at one version; the value is masked for a caller who may not read it. */
export const CommitSecretContentSchema = z.object({
  secretKey: z.string(),
  secretValue: z.string(),
  secretValueHidden: z.boolean(),
  secretComment: z.string(),
  skipMultilineEncoding: z.boolean(),
  secretReminderNote: z.string().nullable(),
  secretReminderRepeatDays: z.number().nullable(),
  tags: z.array(z.string()),
  metadata: z.array(z.object({ key: z.string(), value: z.string() })),
});

/** A subfolder's name at one version. */
export const CommitFolderContentSchema = z.object({ version: z.string(), name: z.string() });

const commitChangeBase = {
  id: z.string(),
  folderCommitId: z.string(),
  changeType: z.enum(["add", "delete"]),
  isUpdate: z.boolean(),
  folderId: z.string(),
  actorType: z.string(),
  actorMetadata: CommitActorSchema,
  message: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
};

/** One change of a commit: a secret's version, or a subfolder added, renamed or deleted. */
export const CommitChangeSchema = z.discriminatedUnion("resourceType", [
  z.object({
    ...commitChangeBase,
    resourceType: z.literal("secret"),
    secretVersionId: z.string(),
    secretId: z.string(),
    secretKey: z.string(),
    secretVersion: z.string(),
    /** The content this change wrote, then (for an update) the content before it. */
    versions: z.array(CommitSecretContentSchema),
  }),
  z.object({
    ...commitChangeBase,
    resourceType: z.literal("folder"),
    folderVersionId: z.string(),
    /** The subfolder's id. */
    folderChangeId: z.string(),
    folderName: z.string(),
    folderVersion: z.string(),
    /** The name this change wrote, then (for a rename) the one before it. */
    versions: z.array(CommitFolderContentSchema),
  }),
]);
export type CommitChange = z.infer<typeof CommitChangeSchema>;

const resourceChangeBase = {
  id: z.string(),
  versionId: z.string(),
  oldVersionId: z.string().optional(),
  changeType: z.enum(["create", "update", "delete"]),
  commitId: z.string(),
  fromVersion: z.string().optional(),
};

/**
 * What a rollback to a commit would do to one secret or subfolder, relative to the folder now. A
 * re-created subfolder comes back with its contents as they were at the commit; a deleted one takes its
 * subtree with it.
 */
export const ResourceChangeSchema = z.discriminatedUnion("type", [
  z.object({
    ...resourceChangeBase,
    type: z.literal("secret"),
    secretKey: z.string(),
    secretVersion: z.string(),
    secretId: z.string(),
    /** The content the rollback would write (for a deletion: the content it removes), then the current one. */
    versions: z.array(CommitSecretContentSchema),
  }),
  z.object({
    ...resourceChangeBase,
    type: z.literal("folder"),
    folderName: z.string(),
    folderVersion: z.string(),
    /** The name the rollback would give (for a deletion: the one it removes), then the current one. */
    versions: z.array(CommitFolderContentSchema),
  }),
]);
export type ResourceChange = z.infer<typeof ResourceChangeSchema>;

export const FolderDiffSchema = z.object({
  folderId: z.string(),
  folderName: z.string(),
  folderPath: z.string(),
  changes: z.array(ResourceChangeSchema),
});

const rollbackBody = z
  .object({
    ...placeFields,
    folderId: z.string().trim().min(1).max(64),
    deepRollback: z.boolean().default(false),
    message: z.string().trim().max(256).optional(),
    /** Keyward: the newest commit the caller's preview was computed against; a newer one refuses. */
    latestCommitId: z.string().trim().min(1).max(64).optional(),
  })
  .refine(hasProjectRef, PROJECT_REF_MESSAGE)
  .refine(hasEnvironment, ENVIRONMENT_MESSAGE);

const approvalBody = z.object({ approval: ChangeRequestSchema });

/** A snapshot of the older API: a view of one commit of a folder (its id is the commit's). */
export const SecretSnapshotSchema = z.object({
  id: z.string(),
  envId: z.string(),
  folderId: z.string(),
  parentFolderId: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

const snapshotFolderQuery = z.object({ environment: EnvironmentSlugInput, path: SecretPathSchema.default("/") });
const ProjectIdParam = z.object({ workspaceId: ProjectIdInput });
const SnapshotIdParam = z.object({ secretSnapshotId: z.string().trim().min(1).max(64) });

export const secretSnapshotsContract = c.router({
  list: {
    method: "GET",
    path: "/api/v1/workspace/:workspaceId/secret-snapshots",
    pathParams: ProjectIdParam,
    query: snapshotFolderQuery.extend({
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
    responses: { 200: z.object({ secretSnapshots: z.array(SecretSnapshotSchema) }) },
    summary: "A folder's snapshots, newest first (views of its commits)",
  },
  count: {
    method: "GET",
    path: "/api/v1/workspace/:workspaceId/secret-snapshots/count",
    pathParams: ProjectIdParam,
    query: snapshotFolderQuery,
    responses: { 200: z.object({ count: z.number().int() }) },
    summary: "How many snapshots a folder has",
  },
  get: {
    method: "GET",
    path: "/api/v1/secret-snapshot/:secretSnapshotId",
    pathParams: SnapshotIdParam,
    responses: {
      200: z.object({
        secretSnapshot: SecretSnapshotSchema.extend({
          projectId: z.string(),
          environment: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
          secretVersions: z.array(SecretVersionSchema),
          folderVersion: z.array(z.object({ id: z.string(), name: z.string() })),
        }),
      }),
    },
    summary: "The folder's secrets as they were at a snapshot (values masked without read-value permission)",
  },
  rollback: {
    method: "POST",
    path: "/api/v1/secret-snapshot/:secretSnapshotId/rollback",
    pathParams: SnapshotIdParam,
    body: z.object({}).optional(),
    responses: { 200: z.union([z.object({ secretSnapshot: SecretSnapshotSchema }), approvalBody]) },
    summary: "Put the folder back as it was at a snapshot: a rollback to its commit",
  },
});

/** A folder changed by a batch commit: a subfolder of the commit's folder. */
const batchFolderName = z.object({ folderName: FolderNameSchema });
const batchItems = <T extends z.ZodTypeAny>(item: T) =>
  z.array(item).max(MAX_SECRETS_PER_BATCH, `At most ${MAX_SECRETS_PER_BATCH} items of a kind per commit`).optional();

/** Secret and subfolder changes written as one commit of one folder. */
const batchCommitBody = z
  .object({
    ...projectRefFields,
    environment: EnvironmentSlugInput,
    secretPath: SecretPathSchema.default("/"),
    message: z.string().trim().max(256).optional(),
    changes: z.object({
      secrets: z
        .object({
          create: batchItems(BatchCreateItemSchema),
          update: batchItems(BatchUpdateItemSchema.omit({ secretPath: true })),
          delete: batchItems(z.object({ secretKey: SecretNameSchema })),
        })
        .default({}),
      folders: z
        .object({
          create: batchItems(batchFolderName.extend({ description: z.string().max(1024).optional() })),
          update: batchItems(
            batchFolderName.extend({ description: z.string().max(1024).nullable().optional(), id: z.string().trim() }),
          ),
          delete: batchItems(batchFolderName.extend({ id: z.string().trim() })),
        })
        .default({}),
    }),
  })
  .refine(hasProjectRef, PROJECT_REF_MESSAGE);

export const pitContract = c.router({
  batchCommit: {
    method: "POST",
    path: "/api/v1/pit/batch/commit",
    body: batchCommitBody,
    responses: {
      200: z.union([
        z.object({ message: z.literal("success"), approval: ChangeRequestSchema }),
        z.object({
          message: z.literal("success"),
          /** Keyward: the commit written (absent when nothing changed). */
          commitId: z.string().optional(),
        }),
      ]),
    },
    summary:
      "Write secret and subfolder changes as one commit; where a change policy applies, the subfolder changes are written and the secret changes become a change request",
  },
  count: {
    method: "GET",
    path: "/api/v1/pit/commits/count",
    query: folderQuery,
    responses: { 200: z.object({ count: z.number().int(), folderId: z.string() }) },
    summary: "How many commits a folder has",
  },
  list: {
    method: "GET",
    path: "/api/v1/pit/commits",
    query: folderQuery.and(
      z.object({
        offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
        limit: z.coerce.number().int().min(1).max(100).default(20),
        search: z.string().trim().max(256).optional(),
        sort: z.enum(["asc", "desc"]).default("desc"),
      }),
    ),
    responses: {
      200: z.object({ commits: z.array(FolderCommitSchema), total: z.number().int(), hasMore: z.boolean() }),
    },
    summary: "A folder's commits in commit order (newest first by default)",
  },
  changes: {
    method: "GET",
    path: "/api/v1/pit/commits/:commitId/changes",
    pathParams: CommitIdParam,
    query: projectQuery,
    responses: {
      200: z.object({
        changes: FolderCommitSchema.omit({ changesCount: true, isLatest: true }).extend({
          changes: z.array(CommitChangeSchema),
        }),
      }),
    },
    summary: "What one commit changed (values masked without read-value permission)",
  },
  compare: {
    method: "GET",
    path: "/api/v1/pit/commits/:commitId/compare",
    pathParams: CommitIdParam,
    query: z
      .object({
        ...placeFields,
        folderId: z.string().trim().min(1).max(64),
        secretPath: SecretPathSchema.default("/"),
        deepRollback: booleanString,
      })
      .refine(hasProjectRef, PROJECT_REF_MESSAGE)
      .refine(hasEnvironment, ENVIRONMENT_MESSAGE),
    responses: { 200: z.array(FolderDiffSchema) },
    summary: "The preview of a rollback to a commit: what it would create, update and delete",
  },
  rollback: {
    method: "POST",
    path: "/api/v1/pit/commits/:commitId/rollback",
    pathParams: CommitIdParam,
    body: rollbackBody,
    responses: {
      200: z.union([
        z.object({
          success: z.boolean(),
          secretChangesCount: z.number().int(),
          folderChangesCount: z.number().int(),
          totalChanges: z.number().int(),
          /** Keyward: the commits the rollback wrote (none when nothing changed). */
          commitIds: z.array(z.string()),
        }),
        approvalBody,
      ]),
    },
    summary: "Put a folder (or, deep, its subtree) back as it was at a commit, as new versions and one new commit",
  },
  revert: {
    method: "POST",
    path: "/api/v1/pit/commits/:commitId/revert",
    pathParams: CommitIdParam,
    query: z.object({ workspaceId: ProjectIdInput.optional() }),
    body: z.object({ projectId: ProjectIdInput.optional() }).optional(),
    responses: {
      200: z.union([
        z.object({
          success: z.boolean(),
          message: z.string(),
          originalCommitId: z.string(),
          revertCommitId: z.string().optional(),
          changesReverted: z.number().int().optional(),
        }),
        approvalBody,
      ]),
    },
    summary: "Undo one commit's changes where they still apply, as a new commit",
  },
  state: {
    method: "GET",
    path: "/api/v1/pit/commits/:commitId",
    pathParams: CommitIdParam,
    query: z
      .object({ ...projectRefFields, folderId: z.string().trim().min(1).max(64) })
      .refine(hasProjectRef, PROJECT_REF_MESSAGE),
    responses: {
      200: z.array(
        z.discriminatedUnion("type", [
          z.object({
            type: z.literal("secret"),
            id: z.string(),
            versionId: z.string(),
            secretKey: z.string(),
            secretVersion: z.number().int(),
          }),
          z.object({
            type: z.literal("folder"),
            id: z.string(),
            versionId: z.string(),
            folderName: z.string(),
            folderVersion: z.number().int(),
          }),
        ]),
      ),
    },
    summary: "A folder's secrets and subfolders as they were at a commit (names and versions)",
  },
});
