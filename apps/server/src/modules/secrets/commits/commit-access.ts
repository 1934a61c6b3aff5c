import { noteAudit, type RequestContext } from "../../../context";
import { NotFoundError, PermissionDeniedError } from "../../../errors";
import { isUuid } from "../../../db/errors";
import type { Ability } from "../../../permissions";
import { findProjectPermissionByRef, type ProjectRef } from "../secret-access";
import { lookupEnvironmentBySlugOrId, requireFolderAt } from "../../folders/folder.service";
import { findFolderPlace } from "../secret.repository";
import { findCommit } from "./commit.repository";
import type { FolderAt } from "./commit-plan";

/** Rights on commits are judged where the folder is: its environment and path. */
export const assertCommitAction = (ability: Ability, action: "read" | "perform-rollback", at: FolderAt) => {
  if (!ability.can(action, "commits", { environment: at.environment, secretPath: at.secretPath }))
    throw new PermissionDeniedError(action, "commits", ability.rulesFor(action, "commits"));
};

/** The project a request names and the caller's ability there. */
const projectOf = async (ctx: RequestContext, ref: ProjectRef) => {
  const permission = await findProjectPermissionByRef(ctx, ref);
  if (!permission) throw new NotFoundError("Project not found");
  return permission;
};

/** The environment a request names by slug (`environment`) or id (`envId`), as its slug. */
const environmentOf = async (ctx: RequestContext, projectId: string, ref: { environment?: string; envId?: string }) => {
  const named = (ref.environment ?? ref.envId)!;
  const env = await lookupEnvironmentBySlugOrId(ctx.deps.db, projectId, named);
  if (!env) throw new NotFoundError(`Environment with slug '${named}' not found`);
  return env.slug;
};

export type PlaceRef = ProjectRef & { environment?: string; envId?: string };

/** A folder named by its path, with the caller's ability: 404 when missing. */
export const folderByPath = async (ctx: RequestContext, ref: PlaceRef & { path: string }) => {
  const { project, ability } = await projectOf(ctx, ref);
  const environment = await environmentOf(ctx, project.id, ref);
  const { folder } = await requireFolderAt(ctx, project.id, environment, ref.path).catch(() => {
    throw new NotFoundError(
      `Folder not found for project ID ${project.id}, environment ${environment}, path ${ref.path}`,
    );
  });
  noteAudit(ctx, { metadata: { environment, path: ref.path } });
  return { project, ability, at: { folderId: folder.id, environment, secretPath: ref.path } satisfies FolderAt };
};

/** A folder named by id, which must lie in the named project and environment: 404 otherwise. */
export const folderById = async (ctx: RequestContext, ref: PlaceRef & { folderId: string }) => {
  const { project, ability } = await projectOf(ctx, ref);
  const environment = await environmentOf(ctx, project.id, ref);
  const place = isUuid(ref.folderId) ? await findFolderPlace(ctx.deps.db, ref.folderId) : undefined;
  if (!place || place.project_id !== project.id || place.env_slug !== environment)
    throw new NotFoundError(`Folder with ID '${ref.folderId}' not found`);
  return { project, ability, at: { folderId: ref.folderId, environment, secretPath: place.path } satisfies FolderAt };
};

/**
 * A commit with its folder's place and the caller's ability: in the named project, or (no `ref`) in the
 * commit's own project, which must be of the caller's organization. 404 with `notFoundMessage` otherwise.
 */
export const commitOf = async (
  ctx: RequestContext,
  ref: ProjectRef | undefined,
  commitId: string,
  notFoundMessage = `Commit with ID ${commitId} not found`,
) => {
  const notFound = () => new NotFoundError(notFoundMessage);
  const commit = await findCommit(ctx.deps.db, commitId);
  const place = commit ? await findFolderPlace(ctx.deps.db, commit.folder_id) : undefined;
  if (!commit || !place) throw notFound();
  const { project, ability } = await projectOf(ctx, ref ?? { projectId: place.project_id }).catch((error: unknown) => {
    throw !ref && error instanceof NotFoundError ? notFound() : error;
  });
  if (place.project_id !== project.id) throw notFound();
  const at: FolderAt = { folderId: commit.folder_id, environment: place.env_slug, secretPath: place.path };
  return { project, ability, commit, at };
};
