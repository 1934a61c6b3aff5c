import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

export interface ProjectDataKeysTable {
  id: Generated<string>;
  project_id: string;
  wrapped_key: string;
  created_at: CreatedAt;
}

export interface SecretTagsTable {
  id: Generated<string>;
  project_id: string;
  slug: string;
  color: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** A metadata entry as stored; an encrypted entry's value is a ciphertext under the project's data key. */
export type StoredSecretMetadata = { key: string; value: string; isEncrypted: boolean };

export interface SecretsTable {
  /** Chosen by the writer, since the ciphertexts' associated data names the row. */
  id: string;
  folder_id: string;
  key: string;
  type: string;
  user_id: string | null;
  version: Generated<number>;
  /** Value and comment sealed together (see secret-crypto.ts); null on rows in the older form. */
  encrypted_fields: string | null;
  /** The older form, one ciphertext each; null once the row is rewritten. */
  encrypted_value: string | null;
  encrypted_comment: string | null;
  skip_multiline_encoding: boolean;
  reminder_note: string | null;
  reminder_repeat_days: number | null;
  metadata: Json<StoredSecretMetadata[]>;
  actor_id: string | null;
  actor_type: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SecretTagLinksTable {
  secret_id: string;
  tag_id: string;
}

export interface SecretVersionsTable {
  id: string;
  secret_id: string;
  folder_id: string;
  version: number;
  key: string;
  type: string;
  user_id: string | null;
  /** Value and comment sealed together (see secret-crypto.ts); null on rows in the older form. */
  encrypted_fields: string | null;
  /** The older form, one ciphertext each; null once the row is rewritten. */
  encrypted_value: string | null;
  encrypted_comment: string | null;
  skip_multiline_encoding: boolean;
  reminder_note: string | null;
  reminder_repeat_days: number | null;
  metadata: Json<StoredSecretMetadata[]>;
  tag_ids: Json<string[]>;
  is_deleted: Generated<boolean>;
  actor_id: string | null;
  actor_type: string | null;
  /** The folder commit that wrote it; null for versions older than commits (and personal ones). */
  commit_seq: Generated<string | null>;
  created_at: CreatedAt;
}

/** One transaction's writes to one folder's shared secrets (see migration 0040). */
export interface FolderCommitsTable {
  id: Generated<string>;
  /** The order of commits; int8, so a string. */
  seq: Generated<string>;
  folder_id: string;
  tx_key: string;
  actor_id: string | null;
  actor_type: string | null;
  message: string | null;
  created_at: CreatedAt;
}

/** A folder's name, description and parent at one version; a deletion is a version (see migration 0044). */
export interface SecretFolderVersionsTable {
  id: Generated<string>;
  folder_id: string;
  env_id: string;
  parent_id: string | null;
  name: string;
  description: string | null;
  version: number;
  is_deleted: Generated<boolean>;
  /** The commit of the parent that recorded it; null for roots and reserved folders. */
  commit_seq: string | null;
  actor_id: string | null;
  actor_type: string | null;
  created_at: CreatedAt;
}

export interface SecretTables {
  project_data_keys: ProjectDataKeysTable;
  secret_tags: SecretTagsTable;
  secrets: SecretsTable;
  secret_tag_links: SecretTagLinksTable;
  secret_versions: SecretVersionsTable;
  folder_commits: FolderCommitsTable;
  secret_folder_versions: SecretFolderVersionsTable;
}
