import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Secret imports, project templates (with the users, groups and identities they add) and user
 * project memberships that templates create. Folders and groups live in 0001.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    // Positions are 1..n per folder; the constraint is deferred so a move can shift rows in place.
    `create table secret_imports (${ID},
      folder_id uuid not null references secret_folders(id) on delete cascade,
      import_env uuid not null references environments(id) on delete cascade,
      import_path text not null,
      position int not null check (position >= 1),
      version int not null default 1,
      is_replication boolean not null default false,
      is_replication_success boolean, replication_status text, last_replicated timestamptz,
      is_reserved boolean not null default false, ${TIMESTAMPS},
      constraint secret_imports_folder_position_key unique (folder_id, position) deferrable initially deferred,
      constraint secret_imports_folder_source_key unique (folder_id, import_env, import_path))`,
    `create index secret_imports_import_env_idx on secret_imports (import_env)`,
    `create table project_templates (${ID},
      org_id uuid not null references organizations(id) on delete cascade,
      name text not null, description text, type text not null,
      roles jsonb not null default '[]'::jsonb,
      environments jsonb, project_managed_identities jsonb, ${TIMESTAMPS},
      constraint project_templates_org_id_name_key unique (org_id, name))`,
    `create table project_template_user_memberships (${ID},
      template_id uuid not null references project_templates(id) on delete cascade,
      org_membership_id uuid not null references org_user_memberships(id) on delete cascade,
      roles jsonb not null, created_at timestamptz not null default now(),
      unique (template_id, org_membership_id))`,
    `create index project_template_user_memberships_org_membership_id_idx on project_template_user_memberships (org_membership_id)`,
    `create table project_template_group_memberships (${ID},
      template_id uuid not null references project_templates(id) on delete cascade,
      group_id uuid not null references groups(id) on delete cascade,
      roles jsonb not null, created_at timestamptz not null default now(),
      unique (template_id, group_id))`,
    `create index project_template_group_memberships_group_id_idx on project_template_group_memberships (group_id)`,
    `create table project_template_identity_memberships (${ID},
      template_id uuid not null references project_templates(id) on delete cascade,
      identity_id uuid not null references identities(id) on delete cascade,
      roles jsonb not null, created_at timestamptz not null default now(),
      unique (template_id, identity_id))`,
    `create index project_template_identity_memberships_identity_id_idx on project_template_identity_memberships (identity_id)`,
    `create table project_user_memberships (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      ${TIMESTAMPS}, unique (project_id, user_id))`,
    `create index project_user_memberships_user_id_idx on project_user_memberships (user_id)`,
    `create table project_user_membership_roles (${ID},
      membership_id uuid not null references project_user_memberships(id) on delete cascade,
      role text not null,
      custom_role_id uuid references project_roles(id) deferrable initially deferred,
      is_temporary boolean not null default false,
      temporary_mode text, temporary_range text,
      temporary_access_start_time timestamptz, temporary_access_end_time timestamptz, ${TIMESTAMPS})`,
    `create index project_user_membership_roles_membership_id_idx on project_user_membership_roles (membership_id)`,
    `create index project_user_membership_roles_custom_role_id_idx on project_user_membership_roles (custom_role_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table project_user_membership_roles",
    "drop table project_user_memberships",
    "drop table project_template_identity_memberships",
    "drop table project_template_group_memberships",
    "drop table project_template_user_memberships",
    "drop table project_templates",
    "drop table secret_imports",
  ]);
