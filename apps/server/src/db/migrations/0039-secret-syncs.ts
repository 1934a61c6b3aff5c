import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Secret syncs: a folder pushed to an outside secret store through an app connection, and the record
 * of every destination key each sync wrote. A destination key is owned by at most one sync
 * (`destination_ref` names the place: account and region, repository, …), and only its owner may
 * overwrite or delete it. A row without `value_hmac` is a write that was claimed and not yet
 * confirmed. `due_at` is when the sync should next run (a change, a trigger or a retry), and
 * `verify_next` whether that run reads the destination's values back (drift); a run holds
 * `claim_token` until `claimed_until`, and `event_cursor` is the last project event it has
 * considered; `referenced_places` the folders its last run read `${…}` references from (a change
 * there makes it due too).
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table secret_syncs (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      name text not null,
      description text,
      destination text not null,
      connection_id uuid not null references app_connections(id) on delete restrict,
      env_id uuid not null references environments(id) on delete cascade,
      secret_path text not null,
      folder_id uuid references secret_folders(id) on delete set null,
      is_auto_sync_enabled boolean not null default true,
      version int not null default 1,
      sync_options jsonb not null,
      destination_config jsonb not null,
      destination_ref text not null,
      sync_status text,
      last_sync_job_id text,
      last_sync_message text,
      last_synced_at timestamptz,
      import_status text,
      last_import_job_id text,
      last_import_message text,
      last_imported_at timestamptz,
      remove_status text,
      last_remove_job_id text,
      last_remove_message text,
      last_removed_at timestamptz,
      due_at timestamptz,
      verify_next boolean not null default true,
      attempts int not null default 0,
      claim_token uuid,
      claimed_until timestamptz,
      event_cursor bigint not null default 0,
      referenced_places jsonb not null default '[]',
      ${TIMESTAMPS},
      unique (project_id, name))`,
    `create index secret_syncs_due_idx on secret_syncs (due_at) where due_at is not null`,
    `create index secret_syncs_folder_idx on secret_syncs (folder_id)`,
    `create index secret_syncs_connection_idx on secret_syncs (connection_id)`,
    `create table secret_sync_keys (
      sync_id uuid not null references secret_syncs(id) on delete cascade,
      destination_ref text not null,
      destination_key text not null,
      value_hmac text,
      written_at timestamptz,
      primary key (sync_id, destination_key),
      unique (destination_ref, destination_key))`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, ["drop table secret_sync_keys", "drop table secret_syncs"]);
