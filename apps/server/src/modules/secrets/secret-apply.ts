import type { Tx } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import { BadRequestError, NotFoundError } from "../../errors";
import type { Ability } from "../../permissions";
import { ensureProjectKey } from "../project-keys/project-key.service";
import { rewriteDependents, type Relocation } from "./references/rewrite";
import { referenceTargets } from "./references/targets";
import { validateReferences } from "./references/validate";
import { assertMayActIn, assertMayStore, assertSecretAction, mayActIn, secretObject } from "./secret-access";
import { openSecretRow, type MetadataEntry, type PlainSecret } from "./secret-crypto";
import {
  insertNewSecrets,
  newSecretId,
  plainOf,
  recordDeletions,
  stateOf,
  writeSecretUpdate,
  type SecretState,
} from "./secret-persist";
import type { Database } from "../../db/database";
import { deleteSecretRows, findSecretByKey, lockSecretsByKeys } from "./secret.repository";
import { resolveTagIds } from "./tags/tag.service";
import type { ProposedChange, ProposedTarget } from "./write-gate";

/**
 * The writes of many secrets inside a caller's transaction, each judged against `ability`: the batch
 * routes run them for their caller, and a merged change request runs them for its committer.
 */

/** Ids as stored: a UUID may arrive in upper case, and must find (and count as) the same tag. */
export const canonicalIds = (ids: readonly string[]) => [...new Set(ids.map((id) => id.toLowerCase()))];

export const duplicates = (keys: readonly string[]) => [...new Set(keys.filter((k, i) => keys.indexOf(k) !== i))];

/** A batch's event names each secret it wrote by id, key and version (never its value). */
export const auditEntryOf = (secret: { id: string; key: string; version: number }) => ({
  secretId: secret.id,
  secretKey: secret.key,
  secretVersion: secret.version,
});

type TagFields = { tagIds?: string[] };

/** Every tag named by the items, looked up once; 404 when any is missing. */
const tagsByIds = async (trx: Tx, projectId: string, items: readonly TagFields[]) => {
  const rows = await resolveTagIds(trx, projectId, canonicalIds(items.flatMap((i) => i.tagIds ?? [])));
  const byId = new Map(rows.map((t) => [t.id, { id: t.id, slug: t.slug, color: t.color }]));
  return (ids: readonly string[]) => canonicalIds(ids).map((id) => byId.get(id)!);
};

/** Where a write lands and who it is judged for. */
export type WriteTarget = {
  projectId: string;
  ability: Ability;
  environment: string;
};

export type BatchCreateItem = {
  secretKey: string;
  secretValue: string;
  secretComment: string;
  skipMultilineEncoding?: boolean | null;
  secretMetadata?: MetadataEntry[];
  tagIds?: string[];
};

/** Creates every item in one folder; 400 when a key exists already. */
export const applyCreates = async (
  ctx: RequestContext,
  trx: Tx,
  target: WriteTarget & { folderId: string; secretPath: string },
  items: readonly BatchCreateItem[],
) => {
  const keys = items.map((s) => s.secretKey);
  const place = { environment: target.environment, secretPath: target.secretPath };
  const tagsOf = await tagsByIds(trx, target.projectId, items);
  const states = items.map((item): SecretState => ({
    id: newSecretId(),
    folderId: target.folderId,
    key: item.secretKey,
    value: item.secretValue,
    comment: item.secretComment,
    skipMultilineEncoding: item.skipMultilineEncoding ?? false,
    reminderNote: null,
    reminderRepeatDays: null,
    metadata: item.secretMetadata ?? [],
    tags: tagsOf(item.tagIds ?? []),
  }));
  for (const state of states) assertMayStore(target.ability, "create", place, state);
  // After the rights: whether a name is taken is not told to someone who may not create it there.
  const existing = await lockSecretsByKeys(trx, target.folderId, keys);
  if (existing.length > 0) throw new BadRequestError(`Secret already exist: ${existing.map((r) => r.key).join(",")}`);
  await validateReferences(
    states.map((s) => s.value),
    place,
    target.ability,
    referenceTargets(trx, target.projectId),
    new Set(keys),
  );
  const rows = await insertNewSecrets(ctx, trx, await ensureProjectKey(ctx.deps, trx, target.projectId), states);
  noteAudit(ctx, { metadata: { secrets: rows.map(auditEntryOf) } });
  return rows;
};

/** A secret's state after an update: the fields given change, the others stay. */
export const updatedState = (
  before: SecretState,
  key: string,
  tags: SecretState["tags"],
  change: Omit<BatchUpdateItem, "secretKey" | "secretPath" | "newSecretName" | "tagIds">,
): SecretState => ({
  ...before,
  key,
  value: change.secretValue ?? before.value,
  comment: change.secretComment ?? before.comment,
  skipMultilineEncoding: change.skipMultilineEncoding ?? before.skipMultilineEncoding,
  reminderNote: change.secretReminderNote !== undefined ? change.secretReminderNote : before.reminderNote,
  reminderRepeatDays:
    change.secretReminderRepeatDays !== undefined ? change.secretReminderRepeatDays : before.reminderRepeatDays,
  metadata: change.secretMetadata ?? before.metadata,
  tags,
});

export type BatchUpdateItem = {
  secretKey: string;
  secretValue?: string;
  secretPath?: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean | null;
  newSecretName?: string;
  tagIds?: string[];
  secretReminderNote?: string | null;
  secretReminderRepeatDays?: number | null;
  secretMetadata?: MetadataEntry[];
};

/**
 * Updates the items, grouped by folder path (each path's folder already resolved); in `upsert` mode
 * missing keys are created. Renamed secrets' references elsewhere follow them.
 */
export const applyUpdates = async (
  ctx: RequestContext,
  trx: Tx,
  target: WriteTarget,
  folders: ReadonlyMap<string, string>,
  byPath: ReadonlyMap<string, readonly BatchUpdateItem[]>,
  mode: "failOnNotFound" | "upsert",
) => {
  const { projectId, ability, environment } = target;
  const key = await ensureProjectKey(ctx.deps, trx, projectId);
  const tagsOf = await tagsByIds(trx, projectId, [...byPath.values()].flat());
  const out: { secret: PlainSecret; secretPath: string }[] = [];
  const renamed: Relocation[] = [];
  for (const path of [...byPath.keys()].sort()) {
    const items = byPath.get(path)!;
    const folderId = folders.get(path)!;
    const at = { environment, secretPath: path };
    // Rights the request's names allow come first: which of them exist is not told to someone who may touch none.
    for (const item of items) {
      const named = { ...at, secretName: item.secretKey };
      if (mode === "failOnNotFound" || !mayActIn(ability, "create", named)) assertMayActIn(ability, "edit", named);
    }
    const rows = await lockSecretsByKeys(
      trx,
      folderId,
      items.map((i) => i.secretKey),
    );
    const found = new Map(rows.map((r) => [r.key, r]));
    const missing = items.filter((i) => !found.has(i.secretKey)).map((i) => i.secretKey);
    if (missing.length > 0 && mode === "failOnNotFound")
      throw new NotFoundError(`Secret does not exist: ${missing.join(", ")} in path ${path}`);
    const renames = items.filter((i) => i.newSecretName !== undefined && i.newSecretName !== i.secretKey);
    const taken = await lockSecretsByKeys(
      trx,
      folderId,
      renames.map((i) => i.newSecretName!),
    );
    const freed = new Set(renames.map((i) => i.secretKey));
    const clash = taken.filter((r) => !freed.has(r.key)).map((r) => r.key);
    if (clash.length > 0) throw new BadRequestError(`Secret with new name already exists: ${clash.join(",")}`);
    await validateReferences(
      items.flatMap((i) => (i.secretValue !== undefined ? [i.secretValue] : [])),
      at,
      ability,
      referenceTargets(trx, projectId),
      new Set(items.map((i) => i.newSecretName ?? i.secretKey)),
    );
    const creates: SecretState[] = [];
    for (const item of items) {
      const row = found.get(item.secretKey);
      const newTags = item.tagIds !== undefined ? tagsOf(item.tagIds) : undefined;
      if (!row) {
        const created: SecretState = {
          id: newSecretId(),
          folderId,
          key: item.newSecretName ?? item.secretKey,
          value: item.secretValue ?? "",
          comment: item.secretComment ?? "",
          skipMultilineEncoding: item.skipMultilineEncoding ?? false,
          reminderNote: item.secretReminderNote ?? null,
          reminderRepeatDays: item.secretReminderRepeatDays ?? null,
          metadata: item.secretMetadata ?? [],
          tags: newTags ?? [],
        };
        assertMayStore(ability, "create", at, created);
        // Addressed by one key and stored under another: the caller must be able to create both.
        if (created.key !== item.secretKey) assertMayStore(ability, "create", at, { ...created, key: item.secretKey });
        creates.push(created);
        continue;
      }
      const before = stateOf(openSecretRow(key, row));
      assertMayStore(ability, "edit", at, before);
      const tags = newTags ?? before.tags;
      if (newTags) assertMayStore(ability, "edit", at, { key: before.key, tags });
      const after = updatedState(before, item.newSecretName ?? before.key, tags, item);
      assertMayStore(ability, "edit", at, after);
      const written = await writeSecretUpdate(ctx, trx, key, before, after);
      if (after.key !== before.key) renamed.push({ from: { ...at, key: before.key }, to: { ...at, key: after.key } });
      out.push({ secret: plainOf(after, { ...written, created_at: row.created_at }, ctx), secretPath: path });
    }
    for (const secret of await insertNewSecrets(ctx, trx, key, creates)) out.push({ secret, secretPath: path });
  }
  await rewriteDependents(ctx, trx, key, ability, projectId, renamed, new Set(out.map((o) => o.secret.id)));
  noteAudit(ctx, { metadata: { secrets: out.map((o) => auditEntryOf(o.secret)) } });
  return out;
};

/** Deletes the keys of one folder, recording their last versions; 404 when any is missing. */
export const applyDeletes = async (
  ctx: RequestContext,
  trx: Tx,
  target: WriteTarget & { folderId: string; secretPath: string },
  keys: readonly string[],
) => {
  for (const secretName of keys)
    assertMayActIn(target.ability, "delete", {
      environment: target.environment,
      secretPath: target.secretPath,
      secretName,
    });
  const rows = await lockSecretsByKeys(trx, target.folderId, keys);
  if (rows.length !== keys.length) {
    const found = new Set(rows.map((r) => r.key));
    throw new NotFoundError(`One or more secrets does not exist: ${keys.filter((k) => !found.has(k)).join(",")}`);
  }
  const key = await ensureProjectKey(ctx.deps, trx, target.projectId);
  const secrets = rows.map((row) => openSecretRow(key, row));
  for (const secret of secrets)
    assertSecretAction(
      target.ability,
      "delete",
      secretObject(
        target.environment,
        target.secretPath,
        secret.key,
        secret.tags.map((t) => t.slug),
      ),
    );
  await deleteSecretRows(trx, target.folderId, keys);
  await recordDeletions(
    ctx,
    trx,
    key,
    secrets.map((s, i) => ({ state: stateOf(s), version: rows[i]!.version })),
  );
  noteAudit(ctx, { metadata: { secrets: secrets.map(auditEntryOf) } });
  return secrets;
};

/** What a change request needs of the secrets it names: id, version and tag slugs, as they are now. */
export type SecretStamp = { id: string; key: string; version: number; tagSlugs: string[] };

const stampOf = (row: { id: string; key: string; version: number; tags: { slug: string }[] }): SecretStamp => ({
  id: row.id,
  key: row.key,
  version: row.version,
  tagSlugs: row.tags.map((t) => t.slug),
});

/** The named secrets of a folder, locked for the caller's transaction. */
export const lockSecretStamps = async (trx: Tx, folderId: string, keys: readonly string[]) =>
  (await lockSecretsByKeys(trx, folderId, keys)).map(stampOf);

/** The named secrets of a folder, read without a lock (for showing a request). */
export const readSecretStamps = async (db: Database, folderId: string, keys: readonly string[]) => {
  const out: SecretStamp[] = [];
  for (const key of new Set(keys)) {
    const row = await findSecretByKey(db, folderId, key);
    if (row) out.push(stampOf(row));
  }
  return out;
};

/**
 * Runs the changes inside the caller's transaction, judged against `ability`, in the order that lets
 * one request delete a key and create it again: deletes, then updates, then creates.
 */
export const applyChanges = async (
  ctx: RequestContext,
  trx: Tx,
  target: ProposedTarget,
  changes: readonly ProposedChange[],
) => {
  const deletes = changes.flatMap((c) => (c.op === "delete" ? [c.secretKey] : []));
  const updates = changes.flatMap((c) => (c.op === "update" ? [c.item] : []));
  const creates = changes.flatMap((c) => (c.op === "create" ? [c.item] : []));
  if (deletes.length > 0) await applyDeletes(ctx, trx, target, deletes);
  if (updates.length > 0)
    await applyUpdates(
      ctx,
      trx,
      target,
      new Map([[target.secretPath, target.folderId]]),
      new Map([[target.secretPath, updates]]),
      "failOnNotFound",
    );
  if (creates.length > 0) await applyCreates(ctx, trx, target, creates);
};
