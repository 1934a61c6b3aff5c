import { randomUUID } from "node:crypto";
import type { CreateKmsKeyBody, KmsKey, KmsKeyUsage, ListKmsKeysQuery, UpdateKmsKeyBody } from "@keyward/contract";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { inTransaction } from "../../db/transaction";
import { noteAudit, type ActorContext } from "../../context";
import { BadRequestError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { getProjectPermission, getProjectPermissionForRow } from "../authz/project-access";
import { ensureProjectKey } from "../project-keys/project-key.service";
import {
  countKeys,
  deleteKey,
  findKeyById,
  findKeyByName,
  insertKey,
  listKeys,
  updateKey,
  type KmsKeyRow,
} from "./kms-key.repository";
import { generateMaterial } from "./kms-material";
import { addKeyVersion } from "./kms-version-store";

/** Reference C.3: keys live in `kms` projects; every check is on the subject `cmek`. */
export const KMS_PROJECT = "kms" as const;
export type CmekAction =
  "read" | "create" | "edit" | "delete" | "encrypt" | "decrypt" | "sign" | "verify" | "export-private-key";

export const toKmsKeyDto = (row: KmsKeyRow): KmsKey => ({
  id: row.id,
  name: row.name,
  description: row.description,
  isDisabled: row.is_disabled,
  orgId: row.org_id,
  projectId: row.project_id,
  keyUsage: row.key_usage as KmsKeyUsage,
  encryptionAlgorithm: row.encryption_algorithm,
  version: row.version,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

const nameTaken = (name: string, projectId: string) =>
  new BadRequestError(`A KMS key with the name "${name}" already exists for the project with ID "${projectId}"`);

/** Update and delete quote the id without quotes, every other route with them. */
export const keyNotFound = (keyId: string, quoted = true) =>
  new NotFoundError(quoted ? `Key with ID "${keyId}" not found` : `Key with ID ${keyId} not found`);

/**
 * The key if it exists in the actor's organization; another tenant's key is indistinguishable from a
 * missing one. The permission check comes after the caller's own checks (reference order).
 */
export const loadKey = async <R extends KmsKeyRow>(
  ctx: ActorContext,
  keyId: string,
  find: (id: string) => Promise<R | undefined>,
  quoted = true,
): Promise<R> => {
  const row = isUuid(keyId) ? await find(keyId) : undefined;
  if (!row || row.org_id !== ctx.actor.orgId) throw keyNotFound(keyId, quoted);
  return row;
};

export const assertKeyPermission = async (ctx: ActorContext, row: KmsKeyRow, action: CmekAction) => {
  const { ability } = await getProjectPermissionForRow(
    ctx,
    { id: row.project_id, org_id: row.org_id, type: row.project_type, permission_version: row.permission_version },
    KMS_PROJECT,
  );
  assertCan(ability, action, "cmek");
};

export const createKmsKey = async (ctx: ActorContext, body: CreateKmsKeyBody) => {
  const { project, ability } = await getProjectPermission(ctx, body.projectId, KMS_PROJECT);
  assertCan(ability, "create", "cmek");
  const { material, publicKey } = await generateMaterial(body.encryptionAlgorithm);
  try {
    return await inTransaction(ctx, async (trx) => {
      const dataKey = await ensureProjectKey(ctx.deps, trx, project.id);
      const { id } = await insertKey(trx, {
        project_id: project.id,
        name: body.name,
        description: body.description ?? "",
        key_usage: body.keyUsage,
        encryption_algorithm: body.encryptionAlgorithm,
      });
      await addKeyVersion(trx, dataKey, { keyId: id, version: 1, versionId: randomUUID(), material, publicKey });
      noteAudit(ctx, { metadata: { keyId: id } });
      return toKmsKeyDto((await findKeyById(trx, id))!);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(body.name, project.id);
    throw error;
  } finally {
    material.fill(0);
  }
};

export const getKmsKey = async (ctx: ActorContext, keyId: string) => {
  const row = await loadKey(ctx, keyId, (id) => findKeyById(ctx.deps.db, id));
  await assertKeyPermission(ctx, row, "read");
  return toKmsKeyDto(row);
};

export const getKmsKeyByName = async (ctx: ActorContext, projectId: string, name: string) => {
  const { project, ability } = await getProjectPermission(ctx, projectId, KMS_PROJECT);
  const row = await findKeyByName(ctx.deps.db, project.id, name);
  if (!row) throw new NotFoundError(`Key with name "${name}" not found for project with ID "${projectId}"`);
  assertCan(ability, "read", "cmek");
  return toKmsKeyDto(row);
};

export const listKmsKeys = async (ctx: ActorContext, query: ListKmsKeysQuery) => {
  const { project, ability } = await getProjectPermission(ctx, query.projectId, KMS_PROJECT);
  assertCan(ability, "read", "cmek");
  const page = { offset: query.offset, limit: query.limit, direction: query.orderDirection, search: query.search };
  const [rows, totalCount] = await Promise.all([
    listKeys(ctx.deps.db, project.id, page),
    countKeys(ctx.deps.db, project.id, query.search),
  ]);
  return { keys: rows.map(toKmsKeyDto), totalCount };
};

export const updateKmsKey = async (ctx: ActorContext, keyId: string, body: UpdateKmsKeyBody) => {
  const row = await loadKey(ctx, keyId, (id) => findKeyById(ctx.deps.db, id), false);
  await assertKeyPermission(ctx, row, "edit");
  try {
    return await inTransaction(ctx, async (trx) => {
      const updated = await updateKey(trx, row.id, {
        name: body.name,
        description: body.description,
        is_disabled: body.isDisabled,
      });
      if (!updated) throw keyNotFound(keyId, false);
      return toKmsKeyDto((await findKeyById(trx, row.id))!);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(body.name ?? row.name, row.project_id);
    throw error;
  }
};

/** Every version goes with the key (cascade): its ciphertexts can never be decrypted again. */
export const deleteKmsKey = async (ctx: ActorContext, keyId: string) => {
  const row = await loadKey(ctx, keyId, (id) => findKeyById(ctx.deps.db, id), false);
  await assertKeyPermission(ctx, row, "delete");
  noteAudit(ctx, { metadata: { name: row.name } });
  const deleted = await inTransaction(ctx, (trx) => deleteKey(trx, row.id));
  if (!deleted) throw keyNotFound(keyId, false);
  return toKmsKeyDto(row);
};
