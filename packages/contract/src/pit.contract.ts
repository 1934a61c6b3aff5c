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
import { CommitChangeSchema, FolderCommitSchema, FolderDiffSchema } from "./pit.schema";

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
