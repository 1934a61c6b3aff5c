import type { DataKey } from "../../../crypto/data-keys";
import { openMetadata, sealMetadata, secretAad, type MetadataEntry, type PlainSecret } from "../secret-crypto";
import type { VersionInsert, VersionRow } from "./version.repository";
import { newVersionId } from "./version.repository";

/** A version row read as a secret: `id` is the secret's (reads by name with `version=N`). */
export const openVersionRow = (key: DataKey, row: VersionRow, id = row.secret_id): PlainSecret => {
  let value: string | undefined;
  let comment: string | undefined;
  return {
    id,
    folderId: row.folder_id,
    key: row.key,
    type: row.type,
    version: row.version,
    get comment() {
      return (comment ??= key.open(row.encrypted_comment, secretAad("secret_versions", row.id, "comment")));
    },
    skipMultilineEncoding: row.skip_multiline_encoding,
    reminderNote: row.reminder_note,
    reminderRepeatDays: row.reminder_repeat_days,
    metadata: openMetadata(key, "secret_versions", row.id, row.metadata),
    tags: row.tags,
    actorId: row.actor_id,
    actorType: row.actor_type,
    createdAt: row.created_at,
    updatedAt: row.created_at,
    value: () => (value ??= key.open(row.encrypted_value, secretAad("secret_versions", row.id, "value"))),
  };
};

/** The state a version records, in plaintext; sealed here under the version row's own associated data. */
export type VersionState = {
  secretId: string;
  folderId: string;
  version: number;
  key: string;
  value: string;
  comment: string;
  skipMultilineEncoding: boolean;
  reminderNote: string | null;
  reminderRepeatDays: number | null;
  metadata: readonly MetadataEntry[];
  tagIds: readonly string[];
  actorId: string;
  actorType: string;
  isDeleted?: boolean;
};

export const sealVersion = (key: DataKey, state: VersionState): VersionInsert => {
  const id = newVersionId();
  return {
    id,
    secret_id: state.secretId,
    folder_id: state.folderId,
    version: state.version,
    key: state.key,
    encrypted_value: key.seal(state.value, secretAad("secret_versions", id, "value")),
    encrypted_comment: key.seal(state.comment, secretAad("secret_versions", id, "comment")),
    skip_multiline_encoding: state.skipMultilineEncoding,
    reminder_note: state.reminderNote,
    reminder_repeat_days: state.reminderRepeatDays,
    metadata: sealMetadata(key, "secret_versions", id, state.metadata),
    tag_ids: [...state.tagIds],
    is_deleted: state.isDeleted ?? false,
    actor_id: state.actorId,
    actor_type: state.actorType,
  };
};
