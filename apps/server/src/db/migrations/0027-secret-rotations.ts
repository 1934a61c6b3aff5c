import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Secret rotations: two credentials of an outside system that take turns. `encrypted_credentials`
 * holds both (sealed); `active_index` names the one the mapped secrets hold. `encrypted_intent` is the
 * write-ahead record of a rotation in progress (the slot and its new password, sealed), committed
 * before the outside system is touched, so a rotation cut short is finished with the same password.
 * A rotation runs under a claim (`claimed_until`, `claim_token`): one instance at a time, and a claim
 * left by a process that died expires. A connection in use by a rotation cannot be deleted.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table secret_rotations (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      folder_id uuid not null references secret_folders(id) on delete cascade,
      connection_id uuid not null references app_connections(id) on delete restrict,
      type text not null,
      name text not null,
      description text,
      parameters jsonb not null,
      secrets_mapping jsonb not null,
      is_auto_rotation_enabled boolean not null default true,
      rotation_interval int not null,
      rotate_at_utc jsonb not null default '{"hours":0,"minutes":0}',
      active_index int not null default 0,
      encrypted_credentials text not null,
      encrypted_intent text,
      rotation_status text not null default 'success',
      last_rotation_message text,
      last_rotated_at timestamptz,
      last_rotation_attempted_at timestamptz,
      next_rotation_at timestamptz,
      is_last_rotation_manual boolean not null default false,
      attempts int not null default 0,
      claimed_until timestamptz,
      claim_token uuid,
      ${TIMESTAMPS},
      unique (folder_id, name))`,
    `create index secret_rotations_project_id_idx on secret_rotations (project_id)`,
    `create index secret_rotations_connection_id_idx on secret_rotations (connection_id)`,
    `create index secret_rotations_due_idx on secret_rotations (next_rotation_at) where is_auto_rotation_enabled`,
  ]);

export const down = (db: Kysely<unknown>) => runStatements(db, ["drop table secret_rotations"]);
