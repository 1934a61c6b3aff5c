import { inTransaction, type Tx } from "../../db/transaction";
import type { Database } from "../../db/database";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { findProjectRow, getProjectPermission, getProjectPermissionForRow } from "../authz/project-access";
import { assertCan } from "../authz/guard";
import { toFolderDto } from "./folder.dto";
import {
  findFolderPlaces,
  deleteFolderRow,
  findChildFolder,
  findEnvironmentById,
  findEnvironmentBySlug,
  findFolderByPath,
  findFolderInEnv,
  findFolderWithContext,
  findRootFolder,
  folderPath,
  insertFolder,
  insertRootFolder,
  listChildFolders,
  listDescendantFolders,
  lockEnvironmentForKeyShare,
  lockFolder,
  lockFolderRow,
  nameFolderWriter,
  pathSegments,
  updateFolderRow,
  type FolderRow,
} from "./folder.repository";

type ProjectRef = { workspaceId?: string; projectId?: string };
type FolderTarget = ProjectRef & { environment: string; path: string };

/** Folders exist only in secret-manager projects. */
export const SECRET_MANAGER = "secret-manager" as const;

export const projectIdOf = (ref: ProjectRef) => (ref.workspaceId ?? ref.projectId)!;

export const folderPathNotFound = (path: string, environment: string) =>
  new NotFoundError(`Folder with path '${path}' in environment with slug '${environment}' not found`);

const NAME_TAKEN = "Folder with specified name already exists";

/** The folder a target names: its path inside the environment, or 404. */
export const requireFolderAt = async (
  ctx: RequestContext,
  projectId: string,
  environment: string,
  path: string,
  db = ctx.deps.db,
) => {
  const env = await findEnvironmentBySlug(db, projectId, environment);
  const root = env ? await findRootFolder(db, env.id) : undefined;
  const folder = root ? await findFolderInEnv(db, root.id, path) : undefined;
  if (!env || !folder) throw folderPathNotFound(path, environment);
  return { env, folder };
};

/** Idempotent, as in the reference: missing parents are created, an existing folder is returned. */
export const createFolder = async (
  ctx: RequestContext,
  body: FolderTarget & { name: string; description?: string | null },
) => {
  const projectId = projectIdOf(body);
  const { ability, project } = await getProjectPermission(ctx, projectId, SECRET_MANAGER);
  assertCan(ability, "create", "secret-folders", { environment: body.environment, secretPath: body.path });
  const env = await findEnvironmentBySlug(ctx.deps.db, project.id, body.environment);
  if (!env)
    throw new NotFoundError(`Environment with slug '${body.environment}' in project with ID '${projectId}' not found`);
  try {
    const folder = await inTransaction(ctx, async (trx) => {
      await nameFolderWriter(trx, ctx.actor);
      // The environment first, as deleting it does (then its folders): otherwise the two deadlock.
      if (!(await lockEnvironmentForKeyShare(trx, env.id))) throw folderPathNotFound("/", body.environment);
      const root = await findRootFolder(trx, env.id);
      if (!root) throw folderPathNotFound("/", body.environment);
      // One writer per environment tree at a time, so concurrent creates of one path agree.
      await lockFolder(trx, root.id);
      let parent: FolderRow = root;
      for (const name of pathSegments(body.path)) {
        parent =
          (await findChildFolder(trx, parent.id, { name })) ??
          (await insertFolder(trx, { env_id: env.id, parent_id: parent.id, name }));
      }
      const existing = await findChildFolder(trx, parent.id, { name: body.name });
      const created =
        existing ??
        (await insertFolder(trx, {
          env_id: env.id,
          parent_id: parent.id,
          name: body.name,
          description: body.description,
        }));
      noteAudit(ctx, { metadata: { folderId: created.id } });
      return created;
    });
    return toFolderDto(folder);
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(NAME_TAKEN);
    throw error;
  }
};

/** "Folder list is allowed to be read by anyone" in the project: membership is enough. */
export const listFolders = async (
  ctx: RequestContext,
  query: FolderTarget & { recursive?: boolean; lastSecretModified?: string },
) => {
  const { project } = await getProjectPermission(ctx, projectIdOf(query), SECRET_MANAGER);
  const env = await findEnvironmentBySlug(ctx.deps.db, project.id, query.environment);
  if (!env) throw new NotFoundError(`Environment with slug '${query.environment}' not found`);
  const root = await findRootFolder(ctx.deps.db, env.id);
  const parent = root ? await findFolderInEnv(ctx.deps.db, root.id, query.path) : undefined;
  if (!parent) return [];
  const since = query.lastSecretModified ? new Date(query.lastSecretModified) : undefined;
  if (!query.recursive) return (await listChildFolders(ctx.deps.db, parent.id, since)).map(toFolderDto);
  const rows = await listDescendantFolders(ctx.deps.db, parent.id, query.path);
  return rows
    .filter((row) => !since || (row.last_secret_modified !== null && new Date(row.last_secret_modified) >= since))
    .map((row) => ({ ...toFolderDto(row), relativePath: row.path }));
};

/** Legacy read by id; another organization's folder is indistinguishable from none. */
export const getFolderById = async (ctx: RequestContext, id: string) => {
  const notFound = new NotFoundError(`Folder with ID '${id}' not found`);
  const row = isUuid(id) ? await findFolderWithContext(ctx.deps.db, id) : undefined;
  const project = row ? await findProjectRow(ctx.deps.db, row.project_id) : undefined;
  if (!row || !project || project.org_id !== ctx.actor.orgId) throw notFound;
  await getProjectPermissionForRow(ctx, project, SECRET_MANAGER);
  const path = await folderPath(ctx.deps.db, row.id);
  if (path === undefined) throw notFound;
  return {
    ...toFolderDto(row),
    path,
    projectId: project.id,
    environment: { envId: row.env_id, envName: row.env_name, envSlug: row.env_slug },
  };
};

/** The folder named by id (or, for older clients, by name) directly under a parent. */
const findTarget = async (db: RequestContext["deps"]["db"], parentId: string, idOrName: string) =>
  (await findChildFolder(db, parentId, { name: idOrName })) ??
  (isUuid(idOrName) ? await findChildFolder(db, parentId, { id: idOrName }) : undefined);

/** Rename or re-describe a folder; `path` is its parent's path. */
export const updateFolder = async (
  ctx: RequestContext,
  folderId: string,
  body: FolderTarget & { name: string; description?: string | null },
) => {
  const { ability, project } = await getProjectPermission(ctx, projectIdOf(body), SECRET_MANAGER);
  assertCan(ability, "edit", "secret-folders", { environment: body.environment, secretPath: body.path });
  const { folder: parent } = await requireFolderAt(ctx, project.id, body.environment, body.path);
  try {
    const updated = await inTransaction(ctx, async (trx) => {
      await lockFolder(trx, parent.id);
      const folder = await findTarget(trx, parent.id, folderId);
      if (!folder) throw new NotFoundError(`Folder with ID '${folderId}' not found`);
      if (body.name !== folder.name && (await findChildFolder(trx, parent.id, { name: body.name })))
        throw new BadRequestError(NAME_TAKEN);
      await nameFolderWriter(trx, ctx.actor);
      return updateFolderRow(trx, folder.id, { name: body.name, description: body.description });
    });
    return toFolderDto(updated);
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(NAME_TAKEN);
    throw error;
  }
};

/** Deletes the folder, its subtree and every import they hold in one statement. */
export const deleteFolder = async (ctx: RequestContext, idOrName: string, body: FolderTarget) => {
  const { ability, project } = await getProjectPermission(ctx, projectIdOf(body), SECRET_MANAGER);
  assertCan(ability, "delete", "secret-folders", { environment: body.environment, secretPath: body.path });
  const env = await findEnvironmentBySlug(ctx.deps.db, project.id, body.environment);
  if (!env) throw new NotFoundError(`Environment with slug '${body.environment}' not found`);
  const deleted = await inTransaction(ctx, async (trx) => {
    const root = await findRootFolder(trx, env.id);
    const parent = root ? await findFolderInEnv(trx, root.id, body.path) : undefined;
    if (!parent) throw folderPathNotFound(body.path, body.environment);
    await lockFolder(trx, parent.id);
    const folder = await findTarget(trx, parent.id, idOrName);
    if (!folder) throw new NotFoundError(`Folder with ID '${idOrName}' not found`);
    await nameFolderWriter(trx, ctx.actor);
    await deleteFolderRow(trx, folder.id);
    return folder;
  });
  return toFolderDto(deleted);
};

/** A new environment's root folder (path "/"), created in the environment's own transaction. */
export const createRootFolder = (trx: Tx, envId: string) => insertRootFolder(trx, envId);

/** An environment of the project by its slug; undefined when there is none. */
export const lookupEnvironmentBySlug = (db: Database, projectId: string, slug: string) =>
  findEnvironmentBySlug(db, projectId, slug);

/** An environment of the project by its slug or, as older clients name it, its id. */
export const lookupEnvironmentBySlugOrId = async (db: Database, projectId: string, ref: string) =>
  (await findEnvironmentBySlug(db, projectId, ref)) ??
  (isUuid(ref) ? await findEnvironmentById(db, projectId, ref) : undefined);

/** A folder's descendants with their paths below `basePath` (the folder's own path), ordered by path. */
export const lookupDescendantFolders = (db: Database, folderId: string, basePath: string) =>
  listDescendantFolders(db, folderId, basePath);

/**
 * The folder at a path of an environment (by slug), with its environment; undefined when the
 * environment or any segment is missing.
 */
export const lookupFolderByPath = (db: Database, projectId: string, environmentSlug: string, path: string) =>
  findFolderByPath(db, projectId, environmentSlug, path);

/**
 * Takes the lock that serialises changes below a folder (creates, imports, moves) for the rest of
 * the transaction; undefined when the folder is gone.
 */
export const lockFolderForChanges = (trx: Tx, folderId: string) => lockFolder(trx, folderId);

/** Several folders' project, environment and path at once (the events stream names where a change happened). */
export const lookupFolderPlaces = (db: Database, folderIds: readonly string[]) => findFolderPlaces(db, folderIds);

/** Where a folder is: its project, environment and path (what `lookupFolderPlaces` answers). */
export type { FolderPlace } from "./folder.repository";

/** A rollback's folder writes: the triggers record each as a version in the parent's commit. */
export {
  lockLiveFolders,
  nameFolderWriter,
  reinsertFolder,
  restoreFolderName,
  deleteFolderRow as removeFolderRow,
} from "./folder.repository";

/** A batch commit's subfolder changes: `id` names an existing subfolder of the commit's folder. */
export type SubfolderChanges = {
  create?: { folderName: string; description?: string }[];
  update?: { id: string; folderName: string; description?: string | null }[];
  delete?: { id: string; folderName: string }[];
};

/**
 * Writes subfolder changes under `parentId` inside the caller's transaction (the caller has checked the
 * rights): deletions, then renames, then creations; 404 for an id that is not a subfolder of it, 400
 * for a name taken. The triggers record each change in the parent's commit of the transaction.
 */
export const writeSubfolders = async (ctx: RequestContext, trx: Tx, parentId: string, changes: SubfolderChanges) => {
  const parent = await lockFolderRow(trx, parentId);
  if (!parent) throw new NotFoundError(`Folder with ID '${parentId}' not found`);
  await nameFolderWriter(trx, ctx.actor);
  const child = async (id: string) => {
    const found = isUuid(id) ? await findChildFolder(trx, parentId, { id }) : undefined;
    if (!found) throw new NotFoundError(`Folder with ID '${id}' not found`);
    return found;
  };
  try {
    for (const item of changes.delete ?? []) {
      // The name the caller saw must still be the folder's: a stale view never deletes another folder.
      const found = await child(item.id);
      if (found.name !== item.folderName)
        throw new BadRequestError(`Folder with ID '${item.id}' is named '${found.name}', not '${item.folderName}'`);
      await deleteFolderRow(trx, found.id);
    }
    for (const item of changes.update ?? [])
      await updateFolderRow(trx, (await child(item.id)).id, { name: item.folderName, description: item.description });
    for (const item of changes.create ?? [])
      await insertFolder(trx, {
        env_id: parent.env_id,
        parent_id: parentId,
        name: item.folderName,
        description: item.description,
      });
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(NAME_TAKEN);
    throw error;
  }
};
