import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";
import {
  EnvironmentSlugInput,
  PROJECT_REF_MESSAGE,
  ProjectIdInput,
  SecretPathSchema,
  hasProjectRef,
  projectRefFields,
} from "./folders.contract";

const c = initContract();

/** Positions are 1-based with no gaps; the lowest is shown first. */
export const SecretImportSchema = z.object({
  id: z.string(),
  version: z.number().int(),
  importPath: z.string(),
  position: z.number().int(),
  folderId: z.string(),
  importEnv: z.object({ name: z.string(), slug: z.string(), id: z.string() }),
  isReplication: z.boolean(),
  isReplicationSuccess: z.boolean().nullable(),
  replicationStatus: z.string().nullable(),
  lastReplicated: TimestampSchema.nullable(),
  isReserved: z.boolean(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type SecretImport = z.infer<typeof SecretImportSchema>;

const MessageWithImport = z.object({ message: z.string(), secretImport: SecretImportSchema });

/** Where the import lives: the environment and path of the folder that holds it. */
const ImportHolder = { environment: EnvironmentSlugInput, path: SecretPathSchema.default("/") };

const SecretImportParams = z.object({ secretImportId: z.string().trim().min(1).max(64) });

/** `position` 0 means "leave it" (the reference ignores falsy positions); larger than the count means last. */
const PositionInput = z.number().int().min(0).max(1_000_000);

export const secretImportsContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/secret-imports",
    body: z
      .object({
        ...projectRefFields,
        ...ImportHolder,
        import: z.object({ environment: EnvironmentSlugInput, path: SecretPathSchema }),
      })
      .refine(hasProjectRef, { message: PROJECT_REF_MESSAGE, path: ["workspaceId"] }),
    responses: { 200: MessageWithImport },
    summary: "Import the secrets of another folder, appended after the existing imports",
  },
  list: {
    method: "GET",
    path: "/api/v1/secret-imports",
    query: z
      .object({ ...projectRefFields, ...ImportHolder })
      .refine(hasProjectRef, { message: PROJECT_REF_MESSAGE, path: ["workspaceId"] }),
    responses: { 200: z.object({ message: z.string(), secretImports: z.array(SecretImportSchema) }) },
    summary: "The imports of a folder, ordered by position",
  },
  update: {
    method: "PATCH",
    path: "/api/v2/secret-imports/:secretImportId",
    pathParams: SecretImportParams,
    body: z.object({
      projectId: ProjectIdInput,
      ...ImportHolder,
      import: z.object({
        environment: EnvironmentSlugInput.optional(),
        path: SecretPathSchema.optional(),
        position: PositionInput.optional(),
      }),
    }),
    responses: { 200: MessageWithImport },
    summary: "Change an import's source or move it to another position",
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/secret-imports/:secretImportId",
    pathParams: SecretImportParams,
    body: z.object({ workspaceId: ProjectIdInput, ...ImportHolder }),
    responses: { 200: MessageWithImport },
    summary: "Remove an import; the ones after it move up",
  },
});
