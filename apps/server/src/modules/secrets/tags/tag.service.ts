import type { SecretTag } from "@keyward/contract";
import type { Database } from "../../../db/database";
import { inTransaction } from "../../../db/transaction";
import { noteAudit, type RequestContext } from "../../../context";
import { isUniqueViolation, isUuid } from "../../../db/errors";
import { BadRequestError, NotFoundError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import { getProjectPermission } from "../../authz/project-access";
import { assertCan } from "../../authz/guard";
import { SECRET_MANAGER } from "../../folders/folder.service";
import { deleteTag, findTag, findTagsByIds, insertTag, listTags, updateTag, type TagRow } from "./tag.repository";

export const toTagDto = (row: TagRow): SecretTag => ({
  id: row.id,
  slug: row.slug,
  name: row.slug,
  color: row.color,
  projectId: row.project_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

const slugTaken = (slug: string) => new BadRequestError(`Tag with slug '${slug}' already exists`);
const tagNotFound = (id: string) => new NotFoundError(`Tag with ID '${id}' not found`);

const permission = (ctx: RequestContext, projectId: string, action: "read" | "create" | "edit" | "delete") =>
  getProjectPermission(ctx, projectId, SECRET_MANAGER).then((p) => {
    assertCan(p.ability, action, "tags");
    return p.project;
  });

export const listProjectTags = async (ctx: RequestContext, projectId: string) => {
  const project = await permission(ctx, projectId, "read");
  return (await listTags(ctx.deps.db, project.id)).map(toTagDto);
};

export const getTagById = async (ctx: RequestContext, projectId: string, tagId: string) => {
  const project = await permission(ctx, projectId, "read");
  const row = isUuid(tagId) ? await findTag(ctx.deps.db, project.id, { id: tagId }) : undefined;
  if (!row) throw tagNotFound(tagId);
  return toTagDto(row);
};

/** The CLI creates a tag when this answers 404. */
export const getTagBySlug = async (ctx: RequestContext, projectId: string, slug: string) => {
  const project = await permission(ctx, projectId, "read");
  const row = await findTag(ctx.deps.db, project.id, { slug: slug.toLowerCase() });
  if (!row) throw new NotFoundError(`Tag with slug '${slug}' not found`);
  return toTagDto(row);
};

export const createTag = async (ctx: RequestContext, projectId: string, body: { slug: string; color: string }) => {
  const project = await permission(ctx, projectId, "create");
  try {
    const row = await inTransaction(ctx, async (trx) => {
      const inserted = await insertTag(trx, { project_id: project.id, slug: body.slug, color: body.color });
      noteAudit(ctx, { metadata: { tagId: inserted.id } });
      return inserted;
    });
    return toTagDto(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(body.slug);
    throw error;
  }
};

export const updateProjectTag = async (
  ctx: RequestContext,
  projectId: string,
  tagId: string,
  body: { slug?: string; color?: string },
) => {
  const project = await permission(ctx, projectId, "edit");
  if (!isUuid(tagId) || !(await findTag(ctx.deps.db, project.id, { id: tagId }))) throw tagNotFound(tagId);
  try {
    const row = await inTransaction(ctx, async (trx) => {
      const updated = await updateTag(trx, tagId, body);
      if (!updated) throw tagNotFound(tagId);
      return updated;
    });
    return toTagDto(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(body.slug ?? "");
    throw error;
  }
};

/** Secrets lose the tag (their links cascade); versions keep its id, which no longer resolves. */
export const deleteProjectTag = async (ctx: RequestContext, projectId: string, tagId: string) => {
  const project = await permission(ctx, projectId, "delete");
  if (!isUuid(tagId) || !(await findTag(ctx.deps.db, project.id, { id: tagId }))) throw tagNotFound(tagId);
  const row = await inTransaction(ctx, async (trx) => {
    const deleted = await deleteTag(trx, tagId);
    if (!deleted) throw tagNotFound(tagId);
    noteAudit(ctx, { metadata: { slug: deleted.slug } });
    return deleted;
  });
  return toTagDto(row);
};

/**
 * The project's tags with these ids, or 404 "Tag not found. Found <slugs>" when any is missing
 *. Runs inside the writer's transaction, so a tag deleted meanwhile is seen.
 */
export const resolveTagIds = async (db: Database, projectId: string, ids: readonly string[]) => {
  const unique = [...new Set(ids)];
  const rows = unique.every(isUuid) ? await findTagsByIds(db, projectId, unique) : [];
  if (rows.length !== unique.length)
    throw new NotFoundError(`Tag not found. Found ${rows.map((r) => r.slug).join(",")}`);
  return rows;
};
