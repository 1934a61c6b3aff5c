import type { DataKey } from "../../../crypto/data-keys";
import { sealFields, type MetadataEntry } from "../secret-crypto";
import type { VersionInsert } from "./version.repository";
import { newVersionId } from "./version.repository";

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
  /** The owner of a personal secret; absent for a shared one. */
  userId?: string | null;
};

export const sealVersion = (key: DataKey, state: VersionState): VersionInsert => {
  const id = newVersionId();
  return {
    id,
    secret_id: state.secretId,
    folder_id: state.folderId,
    version: state.version,
    key: state.key,
    user_id: state.userId ?? null,
    ...sealFields(key, "secret_versions", id, state),
    skip_multiline_encoding: state.skipMultilineEncoding,
    reminder_note: state.reminderNote,
    reminder_repeat_days: state.reminderRepeatDays,
    tag_ids: [...state.tagIds],
    is_deleted: state.isDeleted ?? false,
    actor_id: state.actorId,
    actor_type: state.actorType,
  };
};
