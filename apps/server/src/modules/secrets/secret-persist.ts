import type { Tx } from "../../db/transaction";
import { randomUUID } from "node:crypto";
import type { RequestContext } from "../../context";
import type { DataKey } from "../../crypto/data-keys";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError } from "../../errors";
import type { MetadataEntry, PlainSecret } from "./secret-crypto";
import type { CreateBody } from "./secret-write.service";
import { sealFields } from "./secret-crypto";
import { insertSecrets, insertTagLinks, replaceTagLinks, updateSecretRow, type TagRef } from "./secret.repository";
import { sealVersion, type VersionState } from "./versions/version-crypto";
import { insertVersions } from "./versions/version.repository";

/** A secret's full plaintext state, as written and as recorded in its version. */
export type SecretState = {
  id: string;
  folderId: string;
  key: string;
  value: string;
  comment: string;
  skipMultilineEncoding: boolean;
  reminderNote: string | null;
  reminderRepeatDays: number | null;
  metadata: MetadataEntry[];
  tags: TagRef[];
  /** The owner of a personal secret (an override of the shared one of its key); absent for a shared one. */
  userId?: string | null;
};

/** The state of a new secret from a create request (a personal one names its owner). */
export const newSecretState = (
  body: CreateBody,
  folderId: string,
  key: string,
  tags: TagRef[],
  userId?: string,
): SecretState => ({
  id: newSecretId(),
  folderId,
  key,
  value: body.secretValue,
  comment: body.secretComment,
  skipMultilineEncoding: body.skipMultilineEncoding ?? false,
  reminderNote: body.secretReminderNote ?? null,
  reminderRepeatDays: body.secretReminderRepeatDays ?? null,
  metadata: body.secretMetadata ?? [],
  tags,
  ...(userId ? { userId } : {}),
});

/**
 * Who writes: a request's caller, or the platform itself (a rotation job writes the secrets it
 * rotates as actor type "platform", the rotation's id as actor id).
 */
export type SecretWriter = Pick<RequestContext, "deps" | "scope"> & { actor: { id: string; type: string } };

const actorOf = (ctx: SecretWriter) => ({ actorId: ctx.actor.id, actorType: ctx.actor.type });

export const stateOf = (secret: PlainSecret): SecretState => ({
  id: secret.id,
  folderId: secret.folderId,
  key: secret.key,
  value: secret.value(),
  comment: secret.comment,
  skipMultilineEncoding: secret.skipMultilineEncoding,
  reminderNote: secret.reminderNote,
  reminderRepeatDays: secret.reminderRepeatDays,
  metadata: secret.metadata,
  tags: secret.tags,
});

/** A secret (its id, folder and owner from `base`) holding a recorded version's content again. */
export const stateWithContentOf = (
  base: Pick<SecretState, "id" | "folderId" | "userId">,
  old: PlainSecret,
): SecretState => ({
  ...base,
  key: old.key,
  value: old.value(),
  comment: old.comment,
  skipMultilineEncoding: old.skipMultilineEncoding,
  reminderNote: old.reminderNote,
  reminderRepeatDays: old.reminderRepeatDays,
  metadata: old.metadata,
  tags: old.tags,
});

/** The state as a PlainSecret, for answers. */
export const plainOf = (
  state: SecretState,
  row: { version: number; created_at?: Date | string; updated_at: Date | string },
  ctx: SecretWriter,
): PlainSecret => ({
  ...state,
  type: state.userId ? "personal" : "shared",
  version: row.version,
  actorId: ctx.actor.id,
  actorType: ctx.actor.type,
  createdAt: row.created_at ?? row.updated_at,
  updatedAt: row.updated_at,
  value: () => state.value,
});

const versionOf = (ctx: SecretWriter, state: SecretState, version: number, isDeleted = false): VersionState => ({
  secretId: state.id,
  folderId: state.folderId,
  version,
  key: state.key,
  value: state.value,
  comment: state.comment,
  skipMultilineEncoding: state.skipMultilineEncoding,
  reminderNote: state.reminderNote,
  reminderRepeatDays: state.reminderRepeatDays,
  metadata: state.metadata,
  tagIds: state.tags.map((t) => t.id),
  isDeleted,
  userId: state.userId ?? null,
  ...actorOf(ctx),
});

/**
 * Every write of a shared secret reaches the project events stream (names and tags, never values);
 * a personal secret's never does: its subscribers are other people and identities.
 */
const noteEvent = (ctx: SecretWriter, trx: Tx, type: "create" | "update" | "delete", state: SecretState) => {
  if (state.userId) return;
  ctx.deps.noteSecretEvent(ctx, trx, {
    kind: "secret",
    type,
    folderId: state.folderId,
    key: state.key,
    tags: state.tags.map((t) => t.slug),
  });
};

/** A unique violation on a folder's keys is the reference's 400; anything else propagates. */
export const asKeyConflict = (message: string) => (error: unknown) => {
  if (isUniqueViolation(error)) throw new BadRequestError(message);
  throw error;
};

export const newSecretId = () => randomUUID();

/**
 * Inserts new secrets with their tags and first versions, in one statement each: version 1, or for a
 * secret brought back under its old id (a rollback) the number after its last recorded version.
 */
export const insertNewSecrets = async (
  ctx: SecretWriter,
  trx: Tx,
  key: DataKey,
  states: readonly SecretState[],
  versions: ReadonlyMap<string, number> = new Map(),
) => {
  if (states.length === 0) return [];
  const versionOfNew = (s: SecretState) => versions.get(s.id) ?? 1;
  const actor = actorOf(ctx);
  const rows = await insertSecrets(
    trx,
    states.map((s) => ({
      id: s.id,
      folder_id: s.folderId,
      key: s.key,
      ...sealFields(key, "secrets", s.id, s),
      skip_multiline_encoding: s.skipMultilineEncoding,
      reminder_note: s.reminderNote,
      reminder_repeat_days: s.reminderRepeatDays,
      actor_id: actor.actorId,
      actor_type: actor.actorType,
      user_id: s.userId ?? null,
      version: versionOfNew(s),
    })),
  );
  for (const s of states) noteEvent(ctx, trx, "create", s);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const links = states.flatMap((s) => s.tags.map((t) => ({ secret_id: s.id, tag_id: t.id })));
  if (links.length > 0) await insertTagLinks(trx, links);
  await insertVersions(
    trx,
    states.map((s) => sealVersion(key, versionOf(ctx, s, versionOfNew(s)))),
  );
  return states.map((s) => plainOf(s, byId.get(s.id)!, ctx));
};

/** Writes one secret's new state over its locked row: one more version, recorded. */
export const writeSecretUpdate = async (
  ctx: SecretWriter,
  trx: Tx,
  key: DataKey,
  before: SecretState,
  after: SecretState,
) => {
  const row = await updateSecretRow(trx, after.id, {
    key: after.key,
    ...sealFields(key, "secrets", after.id, after),
    skip_multiline_encoding: after.skipMultilineEncoding,
    reminder_note: after.reminderNote,
    reminder_repeat_days: after.reminderRepeatDays,
    actor_id: ctx.actor.id,
    actor_type: ctx.actor.type,
  });
  const ids = (s: SecretState) =>
    s.tags
      .map((t) => t.id)
      .sort()
      .join();
  const tagsChanged = ids(before) !== ids(after);
  if (tagsChanged)
    await replaceTagLinks(
      trx,
      after.id,
      after.tags.map((t) => t.id),
    );
  await insertVersions(trx, [sealVersion(key, versionOf(ctx, after, row.version))]);
  // A rename is an update of both names: a subscriber may follow either.
  if (before.key !== after.key || before.folderId !== after.folderId) noteEvent(ctx, trx, "update", before);
  noteEvent(ctx, trx, "update", after);
  return row;
};

/** Records deletions as versions (the rows themselves are deleted by the caller). */
export const recordDeletions = (
  ctx: SecretWriter,
  trx: Tx,
  key: DataKey,
  deleted: readonly { state: SecretState; version: number }[],
) => {
  for (const d of deleted) noteEvent(ctx, trx, "delete", d.state);
  return recordGone(ctx, trx, key, deleted);
};

/**
 * Deletion versions for secrets whose rows are already gone (they went with their folder): history
 * stops placing them in the folder. No event: the secrets left when the folder did.
 */
export function recordGone(
  ctx: SecretWriter,
  trx: Tx,
  key: DataKey,
  gone: readonly { state: SecretState; version: number }[],
) {
  return insertVersions(
    trx,
    gone.map((d) => sealVersion(key, versionOf(ctx, d.state, d.version + 1, true))),
  );
}
