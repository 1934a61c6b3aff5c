import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, rateLimited } from "./common";
import { EnvironmentSlugInput, MAX_SECRET_PATH_LENGTH, ProjectIdInput } from "./folders.contract";
import { MAX_SECRET_NAME_LENGTH, QueryBoolean, SecretTagRefSchema, TagSlugsQuery } from "./secrets.schema";

const c = initContract();

export const SECRET_SEARCH_DEFAULT_LIMIT = 50;
export const SECRET_SEARCH_MAX_LIMIT = 200;
export const MAX_SEARCH_CURSOR_LENGTH = 1024;

/** A key query is a glob when it holds one of these; otherwise it is a case-insensitive substring. */
export const KEY_GLOB_CHARS = /[*?[\]{}!]/;
/** A path query is a glob when it holds one of these; otherwise it is a folder prefix. */
export const PATH_GLOB_CHARS = /[*?[\]{}!]/;

/** One secret found: where it lives, what it is, and its value only when asked and readable. */
export const SecretSearchHitSchema = z.object({
  id: z.string(),
  secretKey: z.string(),
  environment: z.string(),
  secretPath: z.string(),
  folderId: z.string(),
  version: z.number().int(),
  type: z.string(),
  tags: z.array(SecretTagRefSchema),
  updatedAt: TimestampSchema,
  /** True unless the value is in `secretValue`. */
  secretValueHidden: z.boolean(),
  secretValue: z.string().optional(),
});
export type SecretSearchHit = z.infer<typeof SecretSearchHitSchema>;

export const SecretSearchResponseSchema = z.object({
  secrets: z.array(SecretSearchHitSchema),
  /** Pass as `cursor` for the next page; null when nothing follows. A page may hold fewer than `limit`. */
  nextCursor: z.string().nullable(),
});
export type SecretSearchResponse = z.infer<typeof SecretSearchResponseSchema>;

export const SecretSearchQuerySchema = z.object({
  /** A substring of the key (case-insensitive), or a glob over the whole key such as `DB_*`. */
  key: z.string().trim().min(1).max(MAX_SECRET_NAME_LENGTH).optional(),
  /** Tag slugs, comma-separated: a secret carrying any of them matches. */
  tag: TagSlugsQuery.optional(),
  /** A folder path prefix (`/app` covers `/app` and below), or a glob over folder paths (`/app/**`). */
  path: z.string().trim().min(1).max(MAX_SECRET_PATH_LENGTH).optional(),
  environment: EnvironmentSlugInput.optional(),
  includeValues: QueryBoolean.default("false"),
  limit: z.coerce.number().int().min(1).max(SECRET_SEARCH_MAX_LIMIT).default(SECRET_SEARCH_DEFAULT_LIMIT),
  cursor: z.string().min(1).max(MAX_SEARCH_CURSOR_LENGTH).optional(),
});

export const secretSearchContract = c.router({
  search: {
    method: "GET",
    path: "/api/v1/projects/:projectId/secrets/search",
    pathParams: z.object({ projectId: ProjectIdInput }),
    query: SecretSearchQuerySchema,
    responses: rateLimited({ 200: SecretSearchResponseSchema }),
    summary: "Search a project's secrets by key, tag, folder path and environment, over what the caller may see",
  },
});
