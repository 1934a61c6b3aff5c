import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { DateTimeInputSchema, TimestampSchema } from "./common";

const c = initContract();

/** Folder names as the reference accepts them: letters, digits, `-` and `_` only, so never `/` or `..`. */
const FOLDER_NAME = /^[a-zA-Z0-9_-]+$/;
export const FOLDER_NAME_MESSAGE =
  "Invalid folder name. Only alphanumeric characters, dashes, and underscores are allowed.";
export const FolderNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .refine((name) => FOLDER_NAME.test(name), FOLDER_NAME_MESSAGE);

export const MAX_SECRET_PATH_LENGTH = 512;

/**
 * A secret path, normalised to "/a/b" ("/" for the root). Empty segments collapse, so a permission
 * condition on "/a" cannot be side-stepped with "//a" or "/a/"; every segment must be a folder name.
 */
export const SecretPathSchema = z
  .string()
  .trim()
  .max(MAX_SECRET_PATH_LENGTH)
  .transform(
    (path) =>
      `/${path
        .split("/")
        .filter((segment) => segment.length > 0)
        .join("/")}`,
  )
  .refine(
    (path) =>
      path === "/" ||
      path
        .slice(1)
        .split("/")
        .every((segment) => FOLDER_NAME.test(segment) && segment.length <= 64),
    "Invalid path: every segment must be a folder name (letters, digits, dashes and underscores)",
  );

export const EnvironmentSlugInput = z.string().trim().min(1).max(64);
export const ProjectIdInput = z.string().trim().min(1).max(64);

/** Older clients send `workspaceId`, newer ones `projectId`; either names the project. */
export const projectRefFields = { workspaceId: ProjectIdInput.optional(), projectId: ProjectIdInput.optional() };
export const hasProjectRef = (value: { workspaceId?: string; projectId?: string }) =>
  value.workspaceId !== undefined || value.projectId !== undefined;
export const PROJECT_REF_MESSAGE = "Either workspaceId or projectId must be provided";

export const FolderSchema = z.object({
  id: z.string(),
  name: z.string(),
  envId: z.string(),
  parentId: z.string().nullable(),
  description: z.string().nullable(),
  version: z.number().int(),
  isReserved: z.boolean(),
  lastSecretModified: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Folder = z.infer<typeof FolderSchema>;

/** The legacy read by id: the folder with its path, environment and project. */
export const FolderWithPathSchema = FolderSchema.extend({
  path: z.string(),
  projectId: z.string(),
  environment: z.object({ envId: z.string(), envName: z.string(), envSlug: z.string() }),
});

const FolderTarget = z.object({
  ...projectRefFields,
  environment: EnvironmentSlugInput,
  path: SecretPathSchema.default("/"),
});

const FolderWrite = FolderTarget.extend({
  name: FolderNameSchema,
  description: z.string().max(1024).nullable().optional(),
});

const BooleanQuery = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]);

export const foldersContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/folders",
    body: FolderWrite.refine(hasProjectRef, { message: PROJECT_REF_MESSAGE, path: ["workspaceId"] }),
    responses: { 200: z.object({ folder: FolderSchema }) },
    summary: "Create a folder at a path (missing parents are created; an existing folder is returned)",
  },
  list: {
    method: "GET",
    path: "/api/v1/folders",
    query: FolderTarget.extend({
      recursive: BooleanQuery.optional(),
      lastSecretModified: DateTimeInputSchema.optional(),
    }).refine(hasProjectRef, { message: PROJECT_REF_MESSAGE, path: ["workspaceId"] }),
    responses: { 200: z.object({ folders: z.array(FolderSchema.extend({ relativePath: z.string().optional() })) }) },
    summary: "Folders directly under a path (or every folder below it when recursive)",
  },
  get: {
    method: "GET",
    path: "/api/v1/folders/:id",
    pathParams: z.object({ id: z.string().trim().min(1) }),
    responses: { 200: z.object({ folder: FolderWithPathSchema }) },
    summary: "Read a folder by id (legacy)",
  },
  update: {
    method: "PATCH",
    path: "/api/v1/folders/:folderId",
    pathParams: z.object({ folderId: z.string().trim().min(1).max(64) }),
    body: FolderWrite.refine(hasProjectRef, { message: PROJECT_REF_MESSAGE, path: ["workspaceId"] }),
    responses: { 200: z.object({ folder: FolderSchema }) },
    summary: "Rename a folder or change its description; `path` is the parent's path",
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/folders/:folderIdOrName",
    pathParams: z.object({ folderIdOrName: z.string().trim().min(1).max(64) }),
    body: FolderTarget.refine(hasProjectRef, { message: PROJECT_REF_MESSAGE, path: ["workspaceId"] }),
    responses: { 200: z.object({ folder: FolderSchema }) },
    summary: "Delete a folder with its subtree and imports; `path` is the parent's path",
  },
});
