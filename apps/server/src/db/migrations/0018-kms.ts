import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Customer-managed KMS keys and their versions. A key's material lives only in its version rows,
 * sealed under the project's data key; rotation adds a version, never rewrites one,
 * so every ciphertext made under an older version keeps decrypting.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table kms_keys (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      name text not null,
      description text not null default '',
      key_usage text not null check (key_usage in ('encrypt-decrypt', 'sign-verify')),
      encryption_algorithm text not null,
      is_disabled boolean not null default false,
      version int not null default 1,
      ${TIMESTAMPS},
      constraint kms_keys_project_name_key unique (project_id, name))`,
    `create table kms_key_versions (
      id uuid primary key,
      key_id uuid not null references kms_keys(id) on delete cascade,
      version int not null,
      encrypted_material text not null,
      public_key text,
      created_at timestamptz not null default now(),
      constraint kms_key_versions_key_version_key unique (key_id, version))`,
  ]);

export const down = (db: Kysely<unknown>) => runStatements(db, [`drop table kms_key_versions`, `drop table kms_keys`]);
