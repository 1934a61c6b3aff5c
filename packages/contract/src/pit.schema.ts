import { z } from "zod";
import { TimestampSchema } from "./common";

/** The shapes of point-in-time recovery's answers: commits, their changes, and what a rollback would do. */

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
