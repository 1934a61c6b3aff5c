import { randomUUID } from "node:crypto";
import { SECRET_SYNC_DESTINATIONS, type SecretSync, type SecretSyncDestination } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import type { Ability } from "../../permissions";
import { getConnectionForUse } from "../app-connections/app-connection.service";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import { SECRET_MANAGER, lookupFolderPlaces, requireFolderAt } from "../folders/folder.service";
import { DRIVERS } from "./destinations";
import { findSync, type SyncRow } from "./secret-sync.repository";

export const nameOf = (destination: SecretSyncDestination) => SECRET_SYNC_DESTINATIONS[destination].name;

export const syncNotFound = (destination: SecretSyncDestination, id: string) =>
  new NotFoundError(`Could not find ${nameOf(destination)} Sync with ID "${id}"`);

/** The object a `secret-syncs` right is judged on: the source folder and the connection. */
export const syncObject = (at: { environment: string; secretPath: string }, connectionId: string) => ({
  environment: at.environment,
  secretPath: at.secretPath,
  connectionId,
});

/** The current path of each sync's folder (the path it was created with once the folder is gone). */
export const placesOf = async (ctx: RequestContext, rows: readonly SyncRow[]) => {
  const ids = [...new Set(rows.flatMap((r) => (r.folder_id ? [r.folder_id] : [])))];
  const paths = new Map((await lookupFolderPlaces(ctx.deps.db, ids)).map((p) => [p.folder_id, p.path]));
  return (row: SyncRow) => ({
    environment: row.env_slug,
    secretPath: (row.folder_id && paths.get(row.folder_id)) || row.secret_path,
  });
};

export const toDto = (row: SyncRow, secretPath: string): SecretSync => ({
  id: row.id,
  name: row.name,
  description: row.description,
  destination: row.destination,
  isAutoSyncEnabled: row.is_auto_sync_enabled,
  version: row.version,
  destinationConfig: row.destination_config,
  syncOptions: row.sync_options,
  projectId: row.project_id,
  folderId: row.folder_id,
  connectionId: row.connection_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
  syncStatus: row.sync_status as SecretSync["syncStatus"],
  lastSyncJobId: row.last_sync_job_id,
  lastSyncMessage: row.last_sync_message,
  lastSyncedAt: toIso(row.last_synced_at),
  importStatus: row.import_status as SecretSync["importStatus"],
  lastImportJobId: row.last_import_job_id,
  lastImportMessage: row.last_import_message,
  lastImportedAt: toIso(row.last_imported_at),
  removeStatus: row.remove_status as SecretSync["removeStatus"],
  lastRemoveJobId: row.last_remove_job_id,
  lastRemoveMessage: row.last_remove_message,
  lastRemovedAt: toIso(row.last_removed_at),
  nextAttemptAt: row.sync_status === "failed" ? toIso(row.due_at) : null,
  connection: { app: row.connection_app, name: row.connection_name, id: row.connection_id },
  environment: { slug: row.env_slug, name: row.env_name, id: row.env_id },
  folder: row.folder_id ? { id: row.folder_id, path: secretPath } : null,
});

export type HeldSync = { row: SyncRow; ability: Ability; at: { environment: string; secretPath: string } };

/**
 * The sync with the caller's ability in its project and where its folder is; 404 when unknown or in
 * a project the caller cannot see (another organization's included), 400 when it is a sync of a
 * destination that uses another app.
 */
export const requireSync = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  id: string,
): Promise<HeldSync> => {
  const row = await findSync(ctx.deps.db, id);
  if (!row) throw syncNotFound(destination, id);
  const { ability } = await getProjectPermission(ctx, row.project_id, SECRET_MANAGER).catch((error: unknown) => {
    throw error instanceof NotFoundError ? syncNotFound(destination, id) : error;
  });
  if (
    SECRET_SYNC_DESTINATIONS[row.destination as SecretSyncDestination]?.connection !== row.connection_app ||
    SECRET_SYNC_DESTINATIONS[destination].connection !== row.connection_app
  )
    throw new BadRequestError(`Secret sync with ID "${id}" is not configured for ${nameOf(destination)}`);
  const at = (await placesOf(ctx, [row]))(row);
  return { row, ability, at };
};

/** The caller may do `action` on the sync (403 otherwise). */
export const assertOnSync = (held: HeldSync, action: string) =>
  assertCan(held.ability, action, "secret-syncs", syncObject(held.at, held.row.connection_id));

/**
 * A sync delivers every value of its folder to wherever its connection reaches, so pointing one at a
 * folder needs the right to read the folder's values as a whole (readValue, or the legacy read, with
 * no secret name or tag in question); describing them is not enough.
 */
export const assertMayReadFolder = (ability: Ability, at: { environment: string; secretPath: string }) => {
  const object = { environment: at.environment, secretPath: at.secretPath };
  if (ability.can("readValue", "secrets", object) || ability.can("read", "secrets", object)) return;
  throw new ForbiddenError(
    `You do not have permission to read secrets at path "${at.secretPath}" in environment "${at.environment}".`,
    "PermissionDenied",
  );
};

export type Source = { projectId: string; environment: string; secretPath: string; connectionId: string };

/**
 * Checks a source and a connection for a sync (created, moved, or planned): the folder exists (400),
 * the caller may `action` on it and read its values (403), and may use the connection, which is this
 * organization's, of the destination's app and not another project's (404 / 400 / 403). Answers what
 * the sync row needs: the folder, its environment, the opened connection and the destination's place.
 */
export const checkSource = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  ability: Ability,
  source: Source,
  action: string,
  config: Record<string, unknown>,
) => {
  const { env, folder } = await requireFolderAt(ctx, source.projectId, source.environment, source.secretPath).catch(
    (error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
      throw new BadRequestError(
        `Could not find folder with path "${source.secretPath}" in environment "${source.environment}" for project with ID "${source.projectId}"`,
      );
    },
  );
  assertCan(ability, action, "secret-syncs", syncObject(source, source.connectionId));
  assertMayReadFolder(ability, source);
  const connection = await getConnectionForUse(
    ctx,
    source.connectionId,
    source.projectId,
    SECRET_SYNC_DESTINATIONS[destination].connection,
  );
  const ref = await destinationRefOf(ctx, destination, connection, config);
  return { env, folder, connection, ref };
};

/** Where a destination's settings point through a connection, as its driver names it (400 when unreachable). */
export const destinationRefOf = (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  connection: Awaited<ReturnType<typeof getConnectionForUse>>,
  config: Record<string, unknown>,
) =>
  DRIVERS[destination].refOf(ctx.deps, connection, config).catch((error: unknown) => {
    throw new BadRequestError(
      `Unable to reach the destination with the connection: ${error instanceof Error ? error.message : String(error)}`.slice(
        0,
        1_024,
      ),
    );
  });

export const newJobId = () => randomUUID();
