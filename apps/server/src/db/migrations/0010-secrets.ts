import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Secrets with their tags and versions, and the per-project data keys that encrypt them. Every row
 * hangs off a folder or a project with ON DELETE CASCADE, so deleting a folder, an environment or a
 * project removes its secrets, versions and keys in the same statement (and transaction).
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    // One AES-256 data key per project, stored wrapped by the root key.
    `create table project_data_keys (${ID},
      project_id uuid not null unique references projects(id) on delete cascade,
      wrapped_key text not null,
      created_at timestamptz not null default now())`,
    `create table secret_tags (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      slug text not null, color text, ${TIMESTAMPS},
      constraint secret_tags_project_slug_key unique (project_id, slug))`,
    // Values and comments are ciphertexts under the project's data key, bound to the row's id.
    `create table secrets (${ID},
      folder_id uuid not null references secret_folders(id) on delete cascade,
      key text not null,
      type text not null default 'shared' check (type in ('shared', 'personal')),
      user_id uuid references users(id) on delete cascade,
      version int not null default 1,
      encrypted_value text not null,
      encrypted_comment text not null,
      skip_multiline_encoding boolean not null default false,
      reminder_note text,
      reminder_repeat_days int,
      metadata jsonb not null default '[]'::jsonb,
      actor_id uuid,
      actor_type text,
      ${TIMESTAMPS},
      check ((type = 'shared') = (user_id is null)))`,
    `create unique index secrets_folder_shared_key_idx on secrets (folder_id, key) where type = 'shared'`,
    `create unique index secrets_folder_personal_key_idx on secrets (folder_id, key, user_id) where type = 'personal'`,
    `create index secrets_user_id_idx on secrets (user_id) where user_id is not null`,
    `create table secret_tag_links (
      secret_id uuid not null references secrets(id) on delete cascade,
      tag_id uuid not null references secret_tags(id) on delete cascade,
      primary key (secret_id, tag_id))`,
    `create index secret_tag_links_tag_id_idx on secret_tag_links (tag_id)`,
    // Versions outlive their secret (a deletion is itself a version) but not its folder.
    `create table secret_versions (${ID},
      secret_id uuid not null,
      folder_id uuid not null references secret_folders(id) on delete cascade,
      version int not null,
      key text not null,
      type text not null,
      user_id uuid references users(id) on delete cascade,
      encrypted_value text not null,
      encrypted_comment text not null,
      skip_multiline_encoding boolean not null,
      reminder_note text,
      reminder_repeat_days int,
      metadata jsonb not null,
      tag_ids jsonb not null,
      is_deleted boolean not null default false,
      actor_id uuid,
      actor_type text,
      created_at timestamptz not null default now(),
      constraint secret_versions_secret_version_key unique (secret_id, version))`,
    `create index secret_versions_folder_id_idx on secret_versions (folder_id)`,
    `create index secret_versions_user_id_idx on secret_versions (user_id) where user_id is not null`,
    // The folder at a path below an environment's root, or null: one call instead of a query per segment.
    `create function secret_folder_at(p_env uuid, p_path text) returns uuid language sql stable as $$
      with recursive segments as (
        select s.name, s.depth::int as depth
        from unnest(string_to_array(trim(both '/' from p_path), '/')) with ordinality as s(name, depth)
      ), walk as (
        select f.id, 0 as depth from secret_folders f where f.env_id = p_env and f.parent_id is null
        union all
        select c.id, w.depth + 1
        from walk w
        join segments s on s.depth = w.depth + 1
        join secret_folders c on c.parent_id = w.id and c.name = s.name
      )
      select id from walk
      where depth = (select count(*) from segments)
    $$`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop function secret_folder_at(uuid, text)",
    "drop table secret_versions",
    "drop table secret_tag_links",
    "drop table secrets",
    "drop table secret_tags",
    "drop table project_data_keys",
  ]);
