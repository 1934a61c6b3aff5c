import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { isStorableText } from "./dynamic-secrets.contract";

const c = initContract();

/** A project's secret tag; `name` equals the slug. */
export const SecretTagSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  color: z.string().nullable(),
  projectId: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type SecretTag = z.infer<typeof SecretTagSchema>;

const TagSlugSchema = slugSchema({ min: 1, max: 64 });
/** Required but may be empty (the CLI sends `""`). */
const TagColorSchema = z.string().trim().max(64).refine(isStorableText, "must not contain NUL characters");

const ProjectParam = z.object({ projectId: z.string().trim().min(1).max(64) });
const TagParams = ProjectParam.extend({ tagId: z.string().trim().min(1).max(64) });
const TagSlugParams = ProjectParam.extend({ tagSlug: z.string().trim().min(1).max(64) });

const tagBody = z.object({ tag: SecretTagSchema });

/** The tag routes under one project prefix: the CLI uses /api/v1/projects, older clients /api/v1/workspace. */
const tagRoutes = <P extends string>(prefix: P) =>
  ({
    list: {
      method: "GET",
      path: `${prefix}/:projectId/tags`,
      pathParams: ProjectParam,
      responses: { 200: z.object({ workspaceTags: z.array(SecretTagSchema), tags: z.array(SecretTagSchema) }) },
      summary: "The project's secret tags",
    },
    getBySlug: {
      method: "GET",
      path: `${prefix}/:projectId/tags/slug/:tagSlug`,
      pathParams: TagSlugParams,
      responses: { 200: z.object({ workspaceTag: SecretTagSchema, tag: SecretTagSchema }) },
      summary: "A tag by slug (404 when there is none)",
    },
    get: {
      method: "GET",
      path: `${prefix}/:projectId/tags/:tagId`,
      pathParams: TagParams,
      responses: { 200: z.object({ workspaceTag: SecretTagSchema, tag: SecretTagSchema }) },
      summary: "A tag by id",
    },
    create: {
      method: "POST",
      path: `${prefix}/:projectId/tags`,
      pathParams: ProjectParam,
      body: z.object({ slug: TagSlugSchema, color: TagColorSchema }),
      responses: { 200: tagBody },
      summary: "Create a tag",
    },
    update: {
      method: "PATCH",
      path: `${prefix}/:projectId/tags/:tagId`,
      pathParams: TagParams,
      body: z.object({ slug: TagSlugSchema.optional(), color: TagColorSchema.optional() }),
      responses: { 200: tagBody },
      summary: "Change a tag's slug or colour",
    },
    delete: {
      method: "DELETE",
      path: `${prefix}/:projectId/tags/:tagId`,
      pathParams: TagParams,
      body: c.noBody(),
      responses: { 200: tagBody },
      summary: "Delete a tag (secrets lose it)",
    },
  }) as const;

export const secretTagsContract = c.router({
  projects: c.router(tagRoutes("/api/v1/projects")),
  workspace: c.router(tagRoutes("/api/v1/workspace")),
});
