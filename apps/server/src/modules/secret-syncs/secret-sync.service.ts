import { randomUUID } from "node:crypto";
import { SECRET_SYNC_DESTINATIONS, SECRET_SYNC_OPTIONS, type SecretSyncDestination } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import { projectEventHead } from "../events/event-places";
import { SECRET_MANAGER } from "../folders/folder.service";
import { getConnectionForUse } from "../app-connections/app-connection.service";
import {
  assertOnSync,
  checkSource,
  destinationRefOf,
  nameOf,
  placesOf,
  requireSync,
  syncObject,
  toDto,
  type HeldSync,
} from "./secret-sync.access";
import {
  deleteSyncRow,
  findSync,
  findSyncAtDestination,
  findSyncByName,
  insertSync,
  listProjectSyncs,
  lockSync,
  releaseAllKeys,
  updateSync,
} from "./secret-sync.repository";

export type CreateSyncBody = {
  name: string;
  projectId: string;
  description?: string | null;
  connectionId: string;
  environment: string;
  secretPath: string;
  isAutoSyncEnabled: boolean;
  syncOptions: Record<string, unknown>;
  destinationConfig: Record<string, unknown>;
};

export type UpdateSyncBody = Partial<Omit<CreateSyncBody, "projectId">>;

const nameTaken = (name: string, projectId: string) => (error: unknown) => {
  if (isUniqueViolation(error))
    throw new BadRequestError(
      `A Secret Sync with the name "${name}" already exists for the project with ID "${projectId}"`,
    );
  throw error;
};

/** The sync as answered, read again after a change. */
export const answerOf = async (ctx: RequestContext, id: string) => {
  const row = (await findSync(ctx.deps.db, id))!;
  return { secretSync: toDto(row, (await placesOf(ctx, [row]))(row).secretPath) };
};

export const listSecretSyncs = async (ctx: RequestContext, projectId: string, destination?: SecretSyncDestination) => {
  const { ability } = await getProjectPermission(ctx, projectId, SECRET_MANAGER);
  // Refused up front: whether the answer is 403 never depends on which syncs exist.
  assertCan(ability, "read", "secret-syncs");
  const rows = await listProjectSyncs(ctx.deps.db, projectId, destination);
  const placeOf = await placesOf(ctx, rows);
  const visible = rows.filter((row) =>
    ability.can("read", "secret-syncs", syncObject(placeOf(row), row.connection_id)),
  );
  return { secretSyncs: visible.map((row) => toDto(row, placeOf(row).secretPath)) };
};

export const getSecretSync = async (ctx: RequestContext, destination: SecretSyncDestination, id: string) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "read");
  return { secretSync: toDto(held.row, held.at.secretPath) };
};

export const getSecretSyncByName = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  name: string,
  projectId: string,
) => {
  await getProjectPermission(ctx, projectId, SECRET_MANAGER);
  const row = await findSyncByName(ctx.deps.db, projectId, name);
  if (!row || row.destination !== destination)
    throw new NotFoundError(`Could not find ${nameOf(destination)} Sync with name "${name}"`);
  return getSecretSync(ctx, destination, row.id);
};

/**
 * Whether another sync of the organization already writes to the place these settings name: the same
 * destination kind and settings and, given a connection, the same account, repository or vault as its
 * driver resolves it (without one, the settings alone decide, so a match may be in another account).
 * The other project's id is answered only when it is the caller's project: another project of the
 * organization is said to exist, never named.
 */
export const checkSecretSyncDestination = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  body: {
    projectId: string;
    destinationConfig: Record<string, unknown>;
    connectionId?: string;
    excludeSyncId?: string;
  },
) => {
  const { ability } = await getProjectPermission(ctx, body.projectId, SECRET_MANAGER);
  assertCan(ability, "read", "secret-syncs");
  const ref = body.connectionId
    ? await destinationRefOf(
        ctx,
        destination,
        await getConnectionForUse(
          ctx,
          body.connectionId,
          body.projectId,
          SECRET_SYNC_DESTINATIONS[destination].connection,
        ),
        body.destinationConfig,
      )
    : undefined;
  const found = await findSyncAtDestination(ctx.deps.db, {
    orgId: ctx.actor.orgId,
    destination,
    config: body.destinationConfig,
    ref,
    excludeId: body.excludeSyncId,
  });
  if (!found) return { hasDuplicate: false };
  return found.project_id === body.projectId
    ? { hasDuplicate: true, duplicateProjectId: found.project_id }
    : { hasDuplicate: true };
};

export const secretSyncOptions = () => ({ secretSyncOptions: SECRET_SYNC_OPTIONS });

export const createSecretSync = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  body: CreateSyncBody,
) => {
  const { ability } = await getProjectPermission(ctx, body.projectId, SECRET_MANAGER);
  const { env, folder, ref } = await checkSource(ctx, destination, ability, body, "create", body.destinationConfig);
  const id = randomUUID();
  const head = await projectEventHead(ctx.deps.db, body.projectId);
  await inTransaction(ctx, async (trx) => {
    await insertSync(trx, {
      id,
      project_id: body.projectId,
      name: body.name,
      description: body.description ?? null,
      destination,
      connection_id: body.connectionId,
      env_id: env.id,
      secret_path: body.secretPath,
      folder_id: folder.id,
      is_auto_sync_enabled: body.isAutoSyncEnabled,
      sync_options: JSON.stringify(body.syncOptions),
      destination_config: JSON.stringify(body.destinationConfig),
      destination_ref: ref,
      event_cursor: head,
      ...(body.isAutoSyncEnabled ? { sync_status: "pending", due_at: new Date(ctx.deps.clock.now()) } : {}),
    });
    noteAudit(ctx, {
      projectId: body.projectId,
      metadata: {
        syncId: id,
        destination,
        name: body.name,
        connectionId: body.connectionId,
        environment: body.environment,
        secretPath: body.secretPath,
        isAutoSyncEnabled: body.isAutoSyncEnabled,
        syncOptions: body.syncOptions,
        destinationConfig: body.destinationConfig,
      },
    });
  }).catch(nameTaken(body.name, body.projectId));
  if (body.isAutoSyncEnabled) ctx.deps.secretSyncWake.wake();
  return answerOf(ctx, id);
};

/**
 * Changes a sync. Moving its source or connection is checked as creating it there is; a new
 * destination place (config or connection to another account) lets the old place's names go: they
 * stay where they are, no longer this sync's. With auto-sync on, a run is queued.
 */
export const updateSecretSync = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  id: string,
  body: UpdateSyncBody,
) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "edit");
  const { row } = held;
  if ((body.environment === undefined) !== (body.secretPath === undefined))
    throw new BadRequestError("Must specify both source environment and secret path");
  const moved =
    body.environment !== undefined || body.connectionId !== undefined || body.destinationConfig !== undefined;
  const config = body.destinationConfig ?? row.destination_config;
  const source = {
    projectId: row.project_id,
    environment: body.environment ?? held.at.environment,
    secretPath: body.secretPath ?? held.at.secretPath,
    connectionId: body.connectionId ?? row.connection_id,
  };
  const checked = moved ? await checkSource(ctx, destination, held.ability, source, "edit", config) : undefined;
  const auto = body.isAutoSyncEnabled ?? row.is_auto_sync_enabled;
  await inTransaction(ctx, async (trx) => {
    const locked = await lockSync(trx, id);
    if (!locked) throw new NotFoundError(`Could not find sync with ID ${id}`);
    if (checked && checked.ref !== locked.destination_ref) await releaseAllKeys(trx, id);
    await updateSync(trx, id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.isAutoSyncEnabled !== undefined ? { is_auto_sync_enabled: body.isAutoSyncEnabled } : {}),
      ...(body.syncOptions ? { sync_options: JSON.stringify(body.syncOptions) } : {}),
      ...(checked
        ? {
            connection_id: source.connectionId,
            env_id: checked.env.id,
            secret_path: source.secretPath,
            folder_id: checked.folder.id,
            destination_config: JSON.stringify(config),
            destination_ref: checked.ref,
          }
        : {}),
      version: locked.version + 1,
      ...(auto ? { sync_status: "pending", due_at: new Date(ctx.deps.clock.now()), verify_next: true } : {}),
    });
    noteAudit(ctx, { projectId: row.project_id, metadata: { syncId: id, destination, ...body } });
  }).catch(nameTaken(body.name ?? row.name, row.project_id));
  if (auto) ctx.deps.secretSyncWake.wake();
  return answerOf(ctx, id);
};

/** Deletes the row in the caller's transaction; its ownership records go with it (the names become foreign). */
export const deleteSyncWithEvent = (ctx: RequestContext, held: HeldSync, removeSecrets: boolean) =>
  inTransaction(ctx, async (trx) => {
    await deleteSyncRow(trx, held.row.id);
    noteAudit(ctx, {
      metadata: { syncId: held.row.id, destination: held.row.destination, name: held.row.name, removeSecrets },
    });
  });
