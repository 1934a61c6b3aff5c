import { randomUUID } from "node:crypto";
import { SECRET_ROTATION_TYPES, type SecretRotation, type SecretRotationType } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { isUniqueViolation } from "../../db/errors";
import { AppError, BadRequestError, NotFoundError } from "../../errors";
import { generatePassword, redactSecrets } from "../connectors/credentials";
import { getConnectionForUse, secretsOf } from "../app-connections/app-connection.service";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import { SECRET_MANAGER, lookupFolderPlaces, requireFolderAt } from "../folders/folder.service";
import { assertMayStore } from "../secrets/secret-access";
import { lockSecretStamps, readSecretStamps } from "../secrets/secret-apply";
import { deleteSystemSecrets, existingSecretNames } from "../secrets/secret-system-write";
import {
  RotationBusyError,
  nextRotationAt,
  openCredentials,
  runRotation,
  sealCredentials,
  sealIntent,
} from "./rotation-engine";
import { assertMayDeleteMappedSecrets, assertMayUseStatement } from "./rotation-access";
import { ROTATORS, type RotationParameters } from "./rotators";
import {
  deleteRotationRow,
  findRotation,
  findRotationByName,
  insertRotation,
  listProjectRotations,
  lockRotation,
  updateRotation,
  type RotationRow,
} from "./rotation.repository";

type RotateAtUtc = { hours: number; minutes: number };

export type CreateRotationBody = {
  name: string;
  projectId: string;
  description?: string | null;
  connectionId: string;
  environment: string;
  secretPath: string;
  isAutoRotationEnabled: boolean;
  rotationInterval: number;
  rotateAtUtc: RotateAtUtc;
  parameters: RotationParameters & { passwordRequirements?: unknown };
  secretsMapping: Record<string, string>;
};

export type UpdateRotationBody = {
  name?: string;
  description?: string | null;
  isAutoRotationEnabled?: boolean;
  rotationInterval?: number;
  rotateAtUtc?: RotateAtUtc;
  parameters?: { passwordRequirements?: unknown };
};

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

const notFound = (type: SecretRotationType, id: string) =>
  new NotFoundError(`Could not find ${SECRET_ROTATION_TYPES[type].name} Rotation with ID "${id}"`);

/** What a permission check on a rotation is evaluated against. */
const rotationObject = (row: { env_slug: string; connection_id: string }, path: string) => ({
  environment: row.env_slug,
  secretPath: path,
  connectionId: row.connection_id,
});

const pathsOf = async (ctx: RequestContext, rows: readonly RotationRow[]) =>
  new Map(
    (await lookupFolderPlaces(ctx.deps.db, [...new Set(rows.map((r) => r.folder_id))])).map((p) => [
      p.folder_id,
      p.path,
    ]),
  );

const toDto = (row: RotationRow, path: string): SecretRotation => ({
  id: row.id,
  name: row.name,
  description: row.description,
  type: row.type,
  rotationInterval: row.rotation_interval,
  isAutoRotationEnabled: row.is_auto_rotation_enabled,
  activeIndex: row.active_index,
  projectId: row.project_id,
  folderId: row.folder_id,
  connectionId: row.connection_id,
  rotationStatus:
    row.encrypted_intent && row.rotation_status !== "failed"
      ? "pending"
      : (row.rotation_status as "success" | "failed"),
  lastRotationJobId: null,
  lastRotatedAt: iso(row.last_rotated_at),
  lastRotationAttemptedAt: iso(row.last_rotation_attempted_at),
  nextRotationAt: iso(row.next_rotation_at),
  isLastRotationManual: row.is_last_rotation_manual,
  lastRotationMessage: row.last_rotation_message,
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
  parameters: row.parameters,
  secretsMapping: row.secrets_mapping,
  rotateAtUtc: row.rotate_at_utc,
  connection: { app: row.connection_app, name: row.connection_name, id: row.connection_id },
  environment: { slug: row.env_slug, name: row.env_name, id: row.env_id },
  folder: { id: row.folder_id, path },
});

/** The rotation of this type with the caller's ability in its project; 404 for another type, project or organization. */
const requireRotation = async (ctx: RequestContext, type: SecretRotationType, id: string) => {
  const row = await findRotation(ctx.deps.db, id);
  if (!row) throw notFound(type, id);
  const { ability } = await getProjectPermission(ctx, row.project_id, SECRET_MANAGER).catch((error: unknown) => {
    throw error instanceof NotFoundError ? notFound(type, id) : error;
  });
  if (row.type !== type)
    throw new BadRequestError(
      `Secret Rotation with ID "${id}" is not configured for ${SECRET_ROTATION_TYPES[type].name}`,
    );
  const path = (await pathsOf(ctx, [row])).get(row.folder_id) ?? "/";
  return { row, ability, path };
};

const answer = (row: RotationRow, path: string) => ({ secretRotation: toDto(row, path) });

const reread = async (ctx: RequestContext, id: string, path: string) =>
  answer((await findRotation(ctx.deps.db, id))!, path);

export const listSecretRotations = async (ctx: RequestContext, projectId: string, type?: SecretRotationType) => {
  const { ability } = await getProjectPermission(ctx, projectId, SECRET_MANAGER);
  assertCan(ability, "read", "secret-rotation");
  const rows = await listProjectRotations(ctx.deps.db, projectId, type);
  const paths = await pathsOf(ctx, rows);
  const visible = rows.filter((row) =>
    ability.can("read", "secret-rotation", rotationObject(row, paths.get(row.folder_id)!)),
  );
  noteAudit(ctx, { metadata: { type, count: visible.length, rotationIds: visible.map((r) => r.id) } });
  return { secretRotations: visible.map((row) => toDto(row, paths.get(row.folder_id)!)) };
};

export const getSecretRotation = async (ctx: RequestContext, type: SecretRotationType, id: string) => {
  const { row, ability, path } = await requireRotation(ctx, type, id);
  assertCan(ability, "read", "secret-rotation", rotationObject(row, path));
  return answer(row, path);
};

export const getSecretRotationByName = async (
  ctx: RequestContext,
  type: SecretRotationType,
  name: string,
  where: { projectId: string; environment: string; secretPath: string },
) => {
  const { project, ability } = await getProjectPermission(ctx, where.projectId, SECRET_MANAGER);
  const { folder } = await requireFolderAt(ctx, project.id, where.environment, where.secretPath);
  const row = await findRotationByName(ctx.deps.db, folder.id, name);
  if (!row || row.type !== type)
    throw new NotFoundError(`Could not find ${SECRET_ROTATION_TYPES[type].name} Rotation with name "${name}"`);
  assertCan(ability, "read", "secret-rotation", rotationObject(row, where.secretPath));
  return answer(row, where.secretPath);
};

const assertMapping = (type: SecretRotationType, mapping: Record<string, string>) => {
  const keys = Object.values(mapping);
  const duplicates = keys.filter((k, i) => keys.indexOf(k) !== i);
  if (duplicates.length > 0)
    throw new BadRequestError(
      `Secrets mapping keys must be unique. "${[...new Set(duplicates)].join(", ")}" contains duplicate keys.`,
    );
  void type;
};

/**
 * Create: checks the caller may create the rotation and the mapped secrets and use the connection,
 * that the users exist and may be altered, then records the rotation with an intent giving both
 * slots new passwords, and runs it at once. A failure removes the rotation (400 with the cause).
 */
export const createSecretRotation = async (ctx: RequestContext, type: SecretRotationType, body: CreateRotationBody) => {
  const { project, ability } = await getProjectPermission(ctx, body.projectId, SECRET_MANAGER);
  const { env, folder } = await requireFolderAt(ctx, project.id, body.environment, body.secretPath);
  const place = { environment: body.environment, secretPath: body.secretPath };
  assertCan(ability, "create", "secret-rotation", { ...place, connectionId: body.connectionId });
  assertMapping(type, body.secretsMapping);
  for (const key of Object.values(body.secretsMapping)) assertMayStore(ability, "create", place, { key, tags: [] });
  const connection = await getConnectionForUse(ctx, body.connectionId, project.id, SECRET_ROTATION_TYPES[type].app);
  const rotator = ROTATORS[type];
  const statement = body.parameters.rotationStatement;
  if (statement) await assertMayUseStatement(ctx, connection, rotator.dialect, statement);
  const existing = await existingSecretNames(ctx.deps.db, folder.id, Object.values(body.secretsMapping));
  if (existing.length > 0)
    throw new BadRequestError(
      `The following secrets already exist at the path "${body.secretPath}": ${existing.join(", ")}`,
    );
  await rotator.check(ctx.deps, connection, body.parameters).catch((error: unknown) => {
    if (error instanceof AppError) throw error;
    const message = redactSecrets(error instanceof Error ? error.message : String(error), secretsOf(connection));
    throw new BadRequestError(`Unable to validate connection: ${message}`);
  });
  const id = randomUUID();
  const requirements = body.parameters.passwordRequirements as Parameters<typeof generatePassword>[0];
  await inTransaction(ctx.deps.db, async (trx) => {
    const intent = {
      set: [0, 1].map((slot) => ({ slot, password: generatePassword(requirements) })),
      activate: 0,
      manual: false,
    };
    await insertRotation(trx, {
      id,
      project_id: project.id,
      folder_id: folder.id,
      connection_id: connection.id,
      type,
      name: body.name,
      description: body.description ?? null,
      parameters: JSON.stringify(body.parameters),
      secrets_mapping: JSON.stringify(body.secretsMapping),
      is_auto_rotation_enabled: body.isAutoRotationEnabled,
      rotation_interval: body.rotationInterval,
      rotate_at_utc: JSON.stringify(body.rotateAtUtc),
      encrypted_credentials: await sealCredentials(ctx.deps, trx, project.id, id, []),
      encrypted_intent: await sealIntent(ctx.deps, trx, project.id, id, intent),
      rotation_status: "pending",
      // Not due until its first rotation has run; a crash before then leaves the intent, which the job finishes.
      next_rotation_at: null,
    });
  }).catch((error: unknown) => {
    if (isUniqueViolation(error))
      throw new BadRequestError(
        `A Secret Rotation with the name "${body.name}" already exists at the secret path "${body.secretPath}"`,
      );
    throw error;
  });
  noteAudit(ctx, {
    projectId: project.id,
    metadata: { rotationId: id, type, connectionId: connection.id, environment: env.slug },
  });
  // The request's event commits with the rotation's first success; a failed create records nothing.
  const outcome = await runRotation(ctx.deps, id, {
    manual: false,
    change: (_row, result) => (result.status === "success" ? ctx : { deps: ctx.deps }),
  });
  if (!outcome?.ok) {
    await inTransaction(ctx.deps.db, (trx) => deleteRotationRow(trx, id));
    throw new BadRequestError(
      `Keyward encountered an issue while generating credentials with the configured inputs: ${outcome?.message ?? "the rotation is gone"}`,
    );
  }
  return reread(ctx, id, body.secretPath);
};

export const updateSecretRotation = async (
  ctx: RequestContext,
  type: SecretRotationType,
  id: string,
  body: UpdateRotationBody,
) => {
  const { row, ability, path } = await requireRotation(ctx, type, id);
  assertCan(ability, "edit", "secret-rotation", rotationObject(row, path));
  await inTransaction(ctx, async (trx) => {
    const locked = await lockRotation(trx, id);
    if (!locked) throw notFound(type, id);
    const interval = body.rotationInterval ?? locked.rotation_interval;
    const at = body.rotateAtUtc ?? locked.rotate_at_utc;
    const auto = body.isAutoRotationEnabled ?? locked.is_auto_rotation_enabled;
    const scheduleChanged =
      body.rotationInterval !== undefined || body.rotateAtUtc !== undefined || body.isAutoRotationEnabled !== undefined;
    await updateRotation(trx, id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.parameters?.passwordRequirements !== undefined
        ? {
            parameters: JSON.stringify({
              ...locked.parameters,
              passwordRequirements: body.parameters.passwordRequirements,
            }),
          }
        : {}),
      rotation_interval: interval,
      rotate_at_utc: JSON.stringify(at),
      is_auto_rotation_enabled: auto,
      ...(scheduleChanged
        ? {
            next_rotation_at: auto
              ? nextRotationAt(ctx.deps, new Date(locked.last_rotated_at ?? ctx.deps.clock.now()), interval, at)
              : null,
          }
        : {}),
    });
    noteAudit(ctx, { projectId: row.project_id, metadata: { rotationId: id, type } });
  }).catch((error: unknown) => {
    if (isUniqueViolation(error))
      throw new BadRequestError(
        `A Secret Rotation with the name "${body.name}" already exists at the secret path "${path}"`,
      );
    throw error;
  });
  return reread(ctx, id, path);
};

/**
 * Delete: optionally gives both credentials passwords nobody knows (`revokeGeneratedCredentials`)
 * and deletes the mapped secrets (`deleteSecrets`, which needs `delete` on each of them: checked
 * before anything changes, and again on the locked secrets); otherwise they stay as ordinary secrets.
 */
export const deleteSecretRotation = async (
  ctx: RequestContext,
  type: SecretRotationType,
  id: string,
  options: { deleteSecrets: boolean; revokeGeneratedCredentials: boolean },
) => {
  const { row, ability, path } = await requireRotation(ctx, type, id);
  assertCan(ability, "delete", "secret-rotation", rotationObject(row, path));
  const place = { environment: row.env_slug, secretPath: path };
  const mapped = Object.values(row.secrets_mapping);
  if (options.deleteSecrets)
    assertMayDeleteMappedSecrets(ability, place, await readSecretStamps(ctx.deps.db, row.folder_id, mapped));
  if (options.revokeGeneratedCredentials) {
    const connection = await getConnectionForUse(
      ctx,
      row.connection_id,
      row.project_id,
      SECRET_ROTATION_TYPES[type].app,
    );
    const rotator = ROTATORS[type];
    const usernames = rotator.usernames(row.parameters);
    const revoked = usernames.map((username) => ({ username, password: generatePassword() }));
    try {
      for (const [slot, cred] of revoked.entries())
        await rotator.setPassword(ctx.deps, connection, row.parameters, cred, revoked[(slot + 1) % 2]);
    } catch (error) {
      if (error instanceof AppError) throw error;
      const message = redactSecrets(error instanceof Error ? error.message : String(error), [
        ...secretsOf(connection),
        ...revoked.map((c) => c.password),
      ]);
      throw new BadRequestError(`Unable to revoke the generated credentials; the rotation is kept: ${message}`);
    }
  }
  await inTransaction(ctx, async (trx) => {
    if (options.deleteSecrets) {
      assertMayDeleteMappedSecrets(ability, place, await lockSecretStamps(trx, row.folder_id, mapped));
      await deleteSystemSecrets(ctx, trx, { projectId: row.project_id, folderId: row.folder_id }, mapped);
    }
    await deleteRotationRow(trx, id);
    noteAudit(ctx, { projectId: row.project_id, metadata: { rotationId: id, type, ...options } });
  });
  return answer(row, path);
};

export const getGeneratedCredentials = async (ctx: RequestContext, type: SecretRotationType, id: string) => {
  const { row, ability, path } = await requireRotation(ctx, type, id);
  assertCan(ability, "read-generated-credentials", "secret-rotation", rotationObject(row, path));
  const rotator = ROTATORS[type];
  const credentials = await openCredentials(ctx.deps, row);
  return {
    generatedCredentials: credentials.filter(Boolean).map((cred) => rotator.values(cred)),
    activeIndex: row.active_index,
    rotationId: row.id,
    type: row.type,
  };
};

/** Rotate now; 400 when a rotation of it (or of its connection) is running, or with the cause when it fails. */
export const rotateSecretRotation = async (ctx: RequestContext, type: SecretRotationType, id: string) => {
  const { row, ability, path } = await requireRotation(ctx, type, id);
  assertCan(ability, "rotate-secrets", "secret-rotation", rotationObject(row, path));
  noteAudit(ctx, { projectId: row.project_id, metadata: { rotationId: id, type, connectionId: row.connection_id } });
  const outcome = await runRotation(ctx.deps, id, {
    manual: true,
    change: (_row, result) => {
      noteAudit(ctx, { metadata: { status: result.status, ...(result.message ? { message: result.message } : {}) } });
      return ctx;
    },
  }).catch((error: unknown) => {
    if (error instanceof RotationBusyError)
      throw new BadRequestError("A rotation is already in progress. Please try again shortly.");
    throw error;
  });
  if (!outcome) throw notFound(type, id);
  if (!outcome.ok) throw new BadRequestError(`The rotation failed and will be retried: ${outcome.message}`);
  return reread(ctx, id, path);
};

export const rotationOptions = () => ({
  secretRotationOptions: (Object.keys(SECRET_ROTATION_TYPES) as SecretRotationType[]).map((type) => ({
    name: SECRET_ROTATION_TYPES[type].name,
    connection: SECRET_ROTATION_TYPES[type].app,
    type,
    template:
      type === "ldap-password"
        ? { secretsMapping: { dn: "LDAP_DN", password: "LDAP_PASSWORD" } }
        : { secretsMapping: { username: "USERNAME", password: "PASSWORD" } },
  })),
});
