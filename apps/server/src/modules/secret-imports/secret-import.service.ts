import { inTransaction } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import type { Ability } from "../../permissions";
import { getProjectPermission } from "../authz/project-access";
import { assertCan } from "../authz/guard";
import {
  SECRET_MANAGER,
  folderPathNotFound,
  lockFolderForChanges,
  lookupEnvironmentBySlug,
  projectIdOf,
  requireFolderAt,
} from "../folders/folder.service";
import { wouldCreateCycle } from "./import-graph";
import { toSecretImportDto } from "./secret-import.dto";
import {
  countImports,
  deleteImportRow,
  findImport,
  findImportBySource,
  insertImport,
  listImports,
  listImportersOfSources,
  listImportGraphOfFolders,
  listProjectImportEdges,
  lockProjectImports,
  moveImport,
  updateImportSource,
} from "./secret-import.repository";

type Holder = { environment: string; path: string };
type Source = { envId: string; envSlug: string; path: string };

const CYCLE = "Cyclic import not allowed";
const NOT_FOUND_ON_UPDATE = "Secret import not found";

/** Importing needs at least a description of the source's secrets (legacy `read` counts). */
const assertCanReadSource = (ability: Ability, environment: string, secretPath: string) => {
  if (ability.can("read", "secrets", { environment, secretPath })) return;
  assertCan(ability, "describeSecret", "secrets", { environment, secretPath });
};

/** The source env must exist (404 with the reference's default message) and so must its folder. */
const resolveSource = async (
  ctx: RequestContext,
  projectId: string,
  environment: string,
  path: string,
): Promise<Source> => {
  const env = await lookupEnvironmentBySlug(ctx.deps.db, projectId, environment);
  if (!env) throw new NotFoundError();
  await requireFolderAt(ctx, projectId, environment, path);
  return { envId: env.id, envSlug: env.slug, path };
};

/** Inside the transaction, after the project lock: refuse cycles and duplicates. */
const assertAcceptableSource = async (
  trx: Database,
  projectId: string,
  target: { envId: string; path: string; folderId: string },
  source: Source,
  ignoreId?: string,
) => {
  const edges = await listProjectImportEdges(trx, projectId);
  if (wouldCreateCycle(edges, target, source, ignoreId)) throw new BadRequestError(CYCLE);
  const duplicate = await findImportBySource(trx, target.folderId, source.envId, source.path);
  if (duplicate && duplicate.id !== ignoreId) {
    throw new BadRequestError(
      `Secret import of path '${source.path}' in environment with slug '${source.envSlug}' already exists`,
    );
  }
};

const asDuplicate = (error: unknown) => {
  if (isUniqueViolation(error, "secret_imports_folder_source_key"))
    throw new BadRequestError("Secret import already exists");
  throw error;
};

export const createSecretImport = async (
  ctx: RequestContext,
  body: { workspaceId?: string; projectId?: string } & Holder & { import: { environment: string; path: string } },
) => {
  const { ability, project } = await getProjectPermission(ctx, projectIdOf(body), SECRET_MANAGER);
  assertCan(ability, "create", "secret-imports", { environment: body.environment, secretPath: body.path });
  assertCanReadSource(ability, body.import.environment, body.import.path);
  const { env, folder } = await requireFolderAt(ctx, project.id, body.environment, body.path);
  const source = await resolveSource(ctx, project.id, body.import.environment, body.import.path);
  const target = { envId: env.id, path: body.path, folderId: folder.id };
  const id = await inTransaction(ctx, async (trx) => {
    await lockProjectImports(trx, project.id);
    if (!(await lockFolderForChanges(trx, folder.id))) throw folderPathNotFound(body.path, body.environment);
    await assertAcceptableSource(trx, project.id, target, source);
    const position = (await countImports(trx, folder.id)) + 1;
    const inserted = await insertImport(trx, {
      folder_id: folder.id,
      import_env: source.envId,
      import_path: source.path,
      position,
    });
    noteAudit(ctx, { metadata: { secretImportId: inserted.id } });
    ctx.deps.noteSecretEvent(ctx, trx, { kind: "imports", folderId: folder.id });
    return inserted.id;
  }).catch(asDuplicate);
  const row = await findImport(ctx.deps.db, folder.id, id);
  // Its folder was deleted (taking the import with it) right after the insert committed.
  if (!row) throw folderPathNotFound(body.path, body.environment);
  return { message: "Successfully created secret import", secretImport: toSecretImportDto(row) };
};

export const listSecretImports = async (
  ctx: RequestContext,
  query: { workspaceId?: string; projectId?: string } & Holder,
) => {
  const { ability, project } = await getProjectPermission(ctx, projectIdOf(query), SECRET_MANAGER);
  assertCan(ability, "read", "secret-imports", { environment: query.environment, secretPath: query.path });
  const { folder } = await requireFolderAt(ctx, project.id, query.environment, query.path);
  const rows = await listImports(ctx.deps.db, folder.id);
  return { message: "Successfully fetched secret imports", secretImports: rows.map(toSecretImportDto) };
};

/** PATCH v2: new source and/or a new position, clamped to 1..n. */
export const updateSecretImport = async (
  ctx: RequestContext,
  importId: string,
  body: { projectId: string } & Holder & { import: { environment?: string; path?: string; position?: number } },
) => {
  const { ability, project } = await getProjectPermission(ctx, body.projectId, SECRET_MANAGER);
  assertCan(ability, "edit", "secret-imports", { environment: body.environment, secretPath: body.path });
  const { env, folder } = await requireFolderAt(ctx, project.id, body.environment, body.path);
  const existing = isUuid(importId) ? await findImport(ctx.deps.db, folder.id, importId) : undefined;
  if (!existing) throw new BadRequestError(NOT_FOUND_ON_UPDATE);
  const sourceEnv = body.import.environment
    ? await lookupEnvironmentBySlug(ctx.deps.db, project.id, body.import.environment)
    : { id: existing.import_env, slug: existing.env_slug };
  if (!sourceEnv) throw new NotFoundError();
  const sourcePath = body.import.path ?? existing.import_path;
  const sourceChanged = sourceEnv.id !== existing.import_env || sourcePath !== existing.import_path;
  let source: Source | undefined;
  if (sourceChanged) {
    assertCanReadSource(ability, sourceEnv.slug, sourcePath);
    source = await resolveSource(ctx, project.id, sourceEnv.slug, sourcePath);
  }
  const target = { envId: env.id, path: body.path, folderId: folder.id };
  await inTransaction(ctx, async (trx) => {
    if (source) await lockProjectImports(trx, project.id);
    await lockFolderForChanges(trx, folder.id);
    const current = await findImport(trx, folder.id, existing.id);
    if (!current) throw new BadRequestError(NOT_FOUND_ON_UPDATE);
    if (source) {
      await assertAcceptableSource(trx, project.id, target, source, current.id);
      await updateImportSource(trx, current.id, { import_env: source.envId, import_path: source.path });
    }
    ctx.deps.noteSecretEvent(ctx, trx, { kind: "imports", folderId: folder.id });
    // 0 leaves the position alone, as in the reference; beyond the end means last.
    if (body.import.position) {
      const to = Math.min(body.import.position, await countImports(trx, folder.id));
      await moveImport(trx, folder.id, current.id, current.position, to);
    }
  }).catch(asDuplicate);
  const row = await findImport(ctx.deps.db, folder.id, existing.id);
  if (!row) throw new BadRequestError(NOT_FOUND_ON_UPDATE);
  return { message: "Successfully updated secret import", secretImport: toSecretImportDto(row) };
};

export const deleteSecretImport = async (
  ctx: RequestContext,
  importId: string,
  body: { workspaceId: string } & Holder,
) => {
  const { ability, project } = await getProjectPermission(ctx, body.workspaceId, SECRET_MANAGER);
  assertCan(ability, "delete", "secret-imports", { environment: body.environment, secretPath: body.path });
  const { folder } = await requireFolderAt(ctx, project.id, body.environment, body.path);
  const deleted = await inTransaction(ctx, async (trx) => {
    await lockFolderForChanges(trx, folder.id);
    const row = isUuid(importId) ? await findImport(trx, folder.id, importId) : undefined;
    if (!row) throw new NotFoundError(`Secret import with folder ID '${importId}' not found`);
    await deleteImportRow(trx, folder.id, row.id, row.position);
    ctx.deps.noteSecretEvent(ctx, trx, { kind: "imports", folderId: folder.id });
    return row;
  });
  return { message: "Successfully deleted secret import", secretImport: toSecretImportDto(deleted) };
};

/**
 * The imports some folders hold (replications left out) and the imports of their sources, up to
 * `depth` imports away, in one statement: each with its source folder resolved or null when the
 * source path does not exist, by holding folder and position. What secret reads follow.
 */
export const listImportGraph = (db: Database, folderIds: readonly string[], depth: number) =>
  listImportGraphOfFolders(db, folderIds, depth);

/** The folders that import any of these folders (named by environment id and path): they see their changes. */
export const listImportingFolders = (db: Database, sources: readonly { envId: string; path: string }[]) =>
  listImportersOfSources(db, sources);
