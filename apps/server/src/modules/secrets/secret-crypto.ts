import type { DataKey } from "../../crypto/data-keys";
import type { StoredSecretMetadata } from "../../db/tables/secrets";
import type { SecretRow, TagRef } from "./secret.repository";

/**
 * Associated data per row and column (ARCHITECTURE §10): a ciphertext copied to another secret,
 * another version or another column no longer decrypts.
 */
export const secretAad = (table: "secrets" | "secret_versions", rowId: string, column: string) =>
  `${table}:${rowId}:${column}`;

export type MetadataEntry = { key: string; value: string; isEncrypted: boolean };

/** A secret as services see it: the comment and metadata decrypted, the value decrypted on demand. */
export type PlainSecret = {
  id: string;
  folderId: string;
  key: string;
  type: string;
  version: number;
  comment: string;
  skipMultilineEncoding: boolean;
  reminderNote: string | null;
  reminderRepeatDays: number | null;
  metadata: MetadataEntry[];
  tags: TagRef[];
  actorId: string | null;
  actorType: string | null;
  createdAt: Date | string;
  updatedAt: Date | string;
  /** Decrypts at most once; values the caller may not see are never decrypted. */
  value: () => string;
};

const openMetadata = (
  key: DataKey,
  table: "secrets" | "secret_versions",
  rowId: string,
  stored: StoredSecretMetadata[],
) =>
  stored.map((m) =>
    m.isEncrypted ? { ...m, value: key.open(m.value, secretAad(table, rowId, `metadata:${m.key}`)) } : { ...m },
  );

export const sealMetadata = (
  key: DataKey,
  table: "secrets" | "secret_versions",
  rowId: string,
  entries: readonly MetadataEntry[],
): StoredSecretMetadata[] =>
  entries.map((m) =>
    m.isEncrypted ? { ...m, value: key.seal(m.value, secretAad(table, rowId, `metadata:${m.key}`)) } : { ...m },
  );

export const openSecretRow = (key: DataKey, row: SecretRow): PlainSecret => {
  let value: string | undefined;
  let comment: string | undefined;
  return {
    id: row.id,
    folderId: row.folder_id,
    key: row.key,
    type: row.type,
    version: row.version,
    // Opened on first read: references and permission checks never need it.
    get comment() {
      return (comment ??= key.open(row.encrypted_comment, secretAad("secrets", row.id, "comment")));
    },
    skipMultilineEncoding: row.skip_multiline_encoding,
    reminderNote: row.reminder_note,
    reminderRepeatDays: row.reminder_repeat_days,
    metadata: openMetadata(key, "secrets", row.id, row.metadata),
    tags: row.tags,
    actorId: row.actor_id,
    actorType: row.actor_type,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    value: () => (value ??= key.open(row.encrypted_value, secretAad("secrets", row.id, "value"))),
  };
};

/** Value, comment and metadata sealed for one secret row. */
export const sealSecretFields = (
  key: DataKey,
  rowId: string,
  fields: { value?: string; comment?: string; metadata?: readonly MetadataEntry[] },
) => ({
  ...(fields.value !== undefined
    ? { encrypted_value: key.seal(fields.value, secretAad("secrets", rowId, "value")) }
    : {}),
  ...(fields.comment !== undefined
    ? { encrypted_comment: key.seal(fields.comment, secretAad("secrets", rowId, "comment")) }
    : {}),
  ...(fields.metadata !== undefined ? { metadata: sealMetadata(key, "secrets", rowId, fields.metadata) } : {}),
});

/** All three sealed, for a new row or a full rewrite. */
export const sealAllFields = (
  key: DataKey,
  rowId: string,
  fields: { value: string; comment: string; metadata: readonly MetadataEntry[] },
) => ({
  encrypted_value: key.seal(fields.value, secretAad("secrets", rowId, "value")),
  encrypted_comment: key.seal(fields.comment, secretAad("secrets", rowId, "comment")),
  metadata: sealMetadata(key, "secrets", rowId, fields.metadata),
});

export { openMetadata };
