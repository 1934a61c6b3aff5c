import { inTransaction } from "../../db/transaction";
import { SECRET_VALUE_HIDDEN_MASK } from "@keyward/contract";
import { BadRequestError, NotFoundError } from "../../errors";
import { folderPathNotFound } from "../folders/folder.service";
import { ensureProjectKey } from "../project-keys/project-key.service";
import { rewriteDependents, type Relocation } from "./references/rewrite";
import { referenceTargets } from "./references/targets";
import { validateReferences } from "./references/validate";
import {
  assertMayStore,
  assertSecretAction,
  canReadValue,
  refusePersonal,
  getProjectPermissionByRef,
  secretObject,
  type ProjectRef,
} from "./secret-access";
import { openSecretRow, type MetadataEntry } from "./secret-crypto";
import { toSecretRaw } from "./secret.dto";
import { noteAudit, type RequestContext } from "../../context";
import {
  asKeyConflict,
  insertNewSecrets,
  newSecretId,
  plainOf,
  recordDeletions,
  stateOf,
  writeSecretUpdate,
  type SecretState,
} from "./secret-persist";
import { deleteSecretRows, lockSecretsByKeys, resolveFolder } from "./secret.repository";
import { resolveTagIds } from "./tags/tag.service";
import { canonicalIds, writeScope } from "./secret-write.service";

type Scope = ProjectRef & { environment: string; secretPath: string };
type TagFields = { tagIds?: string[] };

/** A batch's event names each secret it wrote by id, key and version (never its value). */
const auditEntryOf = (secret: { id: string; key: string; version: number }) => ({
  secretId: secret.id,
  secretKey: secret.key,
  secretVersion: secret.version,
});
const duplicates = (keys: readonly string[]) => [...new Set(keys.filter((k, i) => keys.indexOf(k) !== i))];
const toRefs = (rows: { id: string; slug: string; color: string | null }[]) =>
  rows.map((t) => ({ id: t.id, slug: t.slug, color: t.color }));

/** Every tag named by the items, looked up once; 404 when any is missing. */
const tagsByIds = async (trx: Parameters<typeof resolveTagIds>[0], projectId: string, items: readonly TagFields[]) => {
  const rows = await resolveTagIds(trx, projectId, canonicalIds(items.flatMap((i) => i.tagIds ?? [])));
  const byId = new Map(toRefs(rows).map((t) => [t.id, t]));
  return (ids: readonly string[]) => canonicalIds(ids).map((id) => byId.get(id)!);
};

export type BatchCreateItem = {
  secretKey: string;
  secretValue: string;
  secretComment: string;
  skipMultilineEncoding?: boolean | null;
  secretMetadata?: MetadataEntry[];
  tagIds?: string[];
};

/** POST /api/v3/secrets/batch/raw and /api/v4/secrets/batch: all or nothing. */
export const createSecretsBatch = async (ctx: RequestContext, body: Scope & { secrets: BatchCreateItem[] }) => {
  const { project, ability, folderId } = await writeScope(ctx, body);
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  const keys = body.secrets.map((s) => s.secretKey);
  const repeated = duplicates(keys);
  if (repeated.length > 0) throw new BadRequestError(`Secret already exist: ${repeated.join(",")}`);
  const created = await inTransaction(ctx, async (trx) => {
    const existing = await lockSecretsByKeys(trx, folderId, keys);
    if (existing.length > 0) throw new BadRequestError(`Secret already exist: ${existing.map((r) => r.key).join(",")}`);
    const tagsOf = await tagsByIds(trx, project.id, body.secrets);
    const states = body.secrets.map((item): SecretState => ({
      id: newSecretId(),
      folderId,
      key: item.secretKey,
      value: item.secretValue,
      comment: item.secretComment,
      skipMultilineEncoding: item.skipMultilineEncoding ?? false,
      reminderNote: null,
      reminderRepeatDays: null,
      metadata: item.secretMetadata ?? [],
      tags: tagsOf(item.tagIds ?? []),
    }));
    for (const state of states) assertMayStore(ability, "create", place, state);
    await validateReferences(
      states.map((s) => s.value),
      place,
      ability,
      referenceTargets(trx, project.id),
      new Set(keys),
    );
    const rows = await insertNewSecrets(ctx, trx, await ensureProjectKey(ctx.deps, trx, project.id), states);
    noteAudit(ctx, { metadata: { secrets: rows.map(auditEntryOf) } });
    return rows;
  }).catch(asKeyConflict(`Secret already exist: ${keys.join(",")}`));
  return created.map((secret) => toSecretRaw(secret, place, secret.value()));
};

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
 * PATCH /api/v3/secrets/batch/raw and /api/v4/secrets/batch: items grouped by
 * path; in `upsert` mode missing keys are created. All or nothing.
 */
export const updateSecretsBatch = async (
  ctx: RequestContext,
  body: Scope & { mode: "failOnNotFound" | "upsert"; secrets: BatchUpdateItem[] },
) => {
  const { project, ability } = await getProjectPermissionByRef(ctx, body);
  const byPath = new Map<string, BatchUpdateItem[]>();
  for (const item of body.secrets) {
    const path = item.secretPath ?? body.secretPath;
    byPath.set(path, [...(byPath.get(path) ?? []), item]);
  }
  const folders = new Map<string, string>();
  for (const path of [...byPath.keys()].sort()) {
    const place = await resolveFolder(ctx.deps.db, project.id, body.environment, path);
    if (!place)
      throw new NotFoundError(
        `Environment with slug '${body.environment}' in project with ID '${project.id}' not found`,
      );
    if (!place.folder_id) throw folderPathNotFound("null", body.environment);
    folders.set(path, place.folder_id);
    const repeated = duplicates(byPath.get(path)!.map((i) => i.secretKey));
    if (repeated.length > 0) throw new BadRequestError(`Secret already exist: ${repeated.join(",")}`);
  }
  const results = await inTransaction(ctx, async (trx) => {
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const tagsOf = await tagsByIds(trx, project.id, body.secrets);
    const out: { secret: ReturnType<typeof plainOf>; secretPath: string; value?: string }[] = [];
    const renamed: Relocation[] = [];
    for (const path of [...byPath.keys()].sort()) {
      const items = byPath.get(path)!;
      const folderId = folders.get(path)!;
      const at = { environment: body.environment, secretPath: path };
      const rows = await lockSecretsByKeys(
        trx,
        folderId,
        items.map((i) => i.secretKey),
      );
      const found = new Map(rows.map((r) => [r.key, r]));
      const missing = items.filter((i) => !found.has(i.secretKey)).map((i) => i.secretKey);
      if (missing.length > 0 && body.mode === "failOnNotFound")
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
        { environment: body.environment, secretPath: path },
        ability,
        referenceTargets(trx, project.id),
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
          if (created.key !== item.secretKey)
            assertMayStore(ability, "create", at, { ...created, key: item.secretKey });
          creates.push(created);
          continue;
        }
        const before = stateOf(openSecretRow(key, row));
        assertMayStore(ability, "edit", at, before);
        const tags = newTags ?? before.tags;
        if (newTags) assertMayStore(ability, "edit", at, { key: before.key, tags });
        const after: SecretState = {
          ...before,
          key: item.newSecretName ?? before.key,
          value: item.secretValue ?? before.value,
          comment: item.secretComment ?? before.comment,
          skipMultilineEncoding: item.skipMultilineEncoding ?? before.skipMultilineEncoding,
          reminderNote: item.secretReminderNote !== undefined ? item.secretReminderNote : before.reminderNote,
          reminderRepeatDays:
            item.secretReminderRepeatDays !== undefined ? item.secretReminderRepeatDays : before.reminderRepeatDays,
          metadata: item.secretMetadata ?? before.metadata,
          tags,
        };
        assertMayStore(ability, "edit", at, after);
        const written = await writeSecretUpdate(ctx, trx, key, before, after);
        if (after.key !== before.key) {
          renamed.push({ from: { ...at, key: before.key }, to: { ...at, key: after.key } });
        }
        out.push({ secret: plainOf(after, { ...written, created_at: row.created_at }, ctx), secretPath: path });
      }
      for (const secret of await insertNewSecrets(ctx, trx, key, creates)) out.push({ secret, secretPath: path });
    }
    await rewriteDependents(ctx, trx, key, ability, project.id, renamed, new Set(out.map((o) => o.secret.id)));
    noteAudit(ctx, { metadata: { secrets: out.map((o) => auditEntryOf(o.secret)) } });
    return out;
  }).catch(asKeyConflict(`Secret with new name already exists: ${body.secrets.map((s) => s.newSecretName).join(",")}`));
  return results.map(({ secret, secretPath }) => {
    const readable = canReadValue(
      ability,
      secretObject(
        body.environment,
        secretPath,
        secret.key,
        secret.tags.map((t) => t.slug),
      ),
    );
    return {
      ...toSecretRaw(
        secret,
        { projectId: project.id, environment: body.environment, secretPath },
        readable ? secret.value() : SECRET_VALUE_HIDDEN_MASK,
      ),
      secretValueHidden: !readable,
    };
  });
};

/** DELETE /api/v3/secrets/batch/raw and /api/v4/secrets/batch: all or nothing. */
export const deleteSecretsBatch = async (
  ctx: RequestContext,
  body: Scope & { secrets: { secretKey: string; type: "shared" | "personal" }[] },
) => {
  const { project, ability, folderId } = await writeScope(ctx, body);
  for (const item of body.secrets) refusePersonal(item.type, "delete");
  const keys = [...new Set(body.secrets.map((s) => s.secretKey))];
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  const deleted = await inTransaction(ctx, async (trx) => {
    const rows = await lockSecretsByKeys(trx, folderId, keys);
    if (rows.length !== keys.length)
      throw new NotFoundError(`One or more secrets does not exist: ${rows.map((r) => r.key).join(",")}`);
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const secrets = rows.map((row) => openSecretRow(key, row));
    for (const secret of secrets)
      assertSecretAction(
        ability,
        "delete",
        secretObject(
          body.environment,
          body.secretPath,
          secret.key,
          secret.tags.map((t) => t.slug),
        ),
      );
    await deleteSecretRows(trx, folderId, keys);
    await recordDeletions(
      ctx,
      trx,
      key,
      secrets.map((s, i) => ({ state: stateOf(s), version: rows[i]!.version })),
    );
    noteAudit(ctx, { metadata: { secrets: secrets.map(auditEntryOf) } });
    return secrets;
  });
  return deleted.map((secret) => {
    const readable = canReadValue(
      ability,
      secretObject(
        body.environment,
        body.secretPath,
        secret.key,
        secret.tags.map((t) => t.slug),
      ),
    );
    return {
      ...toSecretRaw(secret, place, readable ? secret.value() : SECRET_VALUE_HIDDEN_MASK),
      secretValueHidden: !readable,
    };
  });
};
