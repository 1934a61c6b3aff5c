import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./foundation";

type Json = ColumnType<Record<string, unknown>, string, string>;
type Time = Date | string | null;

export interface SecretSyncsTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  description: string | null;
  /** aws-secrets-manager | aws-parameter-store | github */
  destination: string;
  connection_id: string;
  env_id: string;
  secret_path: string;
  /** Null once the folder is deleted: the sync then fails until it is pointed at another. */
  folder_id: string | null;
  is_auto_sync_enabled: Generated<boolean>;
  version: Generated<number>;
  sync_options: Json;
  destination_config: Json;
  /** The place the destination config names, as ownership records it (region and account, repository, …). */
  destination_ref: string;
  sync_status: string | null;
  last_sync_job_id: string | null;
  last_sync_message: string | null;
  last_synced_at: Time;
  import_status: string | null;
  last_import_job_id: string | null;
  last_import_message: string | null;
  last_imported_at: Time;
  remove_status: string | null;
  last_remove_job_id: string | null;
  last_remove_message: string | null;
  last_removed_at: Time;
  /** When the sync should run next (a change, a trigger, a retry); null when nothing is owed. */
  due_at: Time;
  /** The next run reads the destination's values back (a trigger, a recheck, a change of the sync). */
  verify_next: Generated<boolean>;
  /** Failed attempts in a row (the backoff's exponent). */
  attempts: Generated<number>;
  claim_token: string | null;
  claimed_until: Time;
  /** The last project event this sync has considered. */
  event_cursor: ColumnType<string, string | number | bigint | undefined, string | number | bigint>;
  /** The folders (environment, path) the last run read references from. */
  referenced_places: ColumnType<{ environment: string; secretPath: string }[], string | undefined, string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SecretSyncKeysTable {
  sync_id: string;
  destination_ref: string;
  destination_key: string;
  /** HMAC of the value written; null while a write is claimed and not yet confirmed. */
  value_hmac: string | null;
  written_at: Time;
}

export interface SecretSyncTables {
  secret_syncs: SecretSyncsTable;
  secret_sync_keys: SecretSyncKeysTable;
}
