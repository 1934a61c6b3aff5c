import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Dynamic secrets and their leases. A dynamic secret's folder may disappear (folder, environment or
 * project deleted): the row is then detached (folder_id null) rather than deleted, so its root
 * credentials survive long enough for the revocation job to remove every credential it handed out.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table dynamic_secrets (${ID},
      folder_id uuid references secret_folders(id) on delete set null,
      name text not null,
      type text not null,
      entity_prefix text not null unique,
      encrypted_inputs text not null,
      default_ttl text not null,
      max_ttl text,
      username_template text,
      metadata jsonb not null default '[]'::jsonb,
      status text, status_details text,
      version int not null default 1,
      ${TIMESTAMPS})`,
    `create unique index dynamic_secrets_folder_name_idx on dynamic_secrets (folder_id, name)`,
    `create index dynamic_secrets_draining_idx on dynamic_secrets (id) where folder_id is null or status = 'Deleting'`,
    `create table dynamic_secret_leases (${ID},
      dynamic_secret_id uuid not null references dynamic_secrets(id) on delete cascade,
      external_entity_id text not null,
      expire_at timestamptz not null,
      version int not null default 1,
      state text not null check (state in ('creating', 'active', 'revoking')),
      status text, status_details text,
      config jsonb,
      attempts int not null default 0,
      next_attempt_at timestamptz,
      claimed_until timestamptz,
      claim_token uuid,
      ${TIMESTAMPS})`,
    `create index dynamic_secret_leases_dynamic_secret_id_idx on dynamic_secret_leases (dynamic_secret_id)`,
    `create index dynamic_secret_leases_expire_at_idx on dynamic_secret_leases (expire_at)`,
    `create index dynamic_secret_leases_pending_idx on dynamic_secret_leases (created_at) where state <> 'active'`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, ["drop table dynamic_secret_leases", "drop table dynamic_secrets"]);
