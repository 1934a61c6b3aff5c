import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Change approvals. A policy protects folders of one or more environments (`secret_path` is a path or
 * a glob); its approvers and bypassers are principals (a person, a group, a machine identity). A
 * retired policy keeps its row (`deleted_at`) so its requests still show what they were judged by.
 *
 * A change request holds a write that was not made: one commit per secret, with the version the
 * committer saw and the new value and comment sealed like secrets. Reviews are one per reviewer.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table secret_approval_policies (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      name text not null,
      secret_path text not null,
      approvals int not null,
      enforcement_level text not null,
      allowed_self_approvals boolean not null,
      bypass_for_machine_identities boolean not null,
      deleted_at timestamptz,
      ${TIMESTAMPS})`,
    `create index secret_approval_policies_project_idx on secret_approval_policies (project_id)`,
    `create table secret_approval_policy_environments (
      policy_id uuid not null references secret_approval_policies(id) on delete cascade,
      env_id uuid not null references environments(id) on delete cascade,
      primary key (policy_id, env_id))`,
    `create index secret_approval_policy_environments_env_idx on secret_approval_policy_environments (env_id)`,
    `create table secret_approval_policy_principals (
      policy_id uuid not null references secret_approval_policies(id) on delete cascade,
      role text not null,
      principal_type text not null,
      principal_id uuid not null,
      primary key (policy_id, role, principal_type, principal_id))`,
    `create table secret_approval_requests (${ID},
      slug text not null unique,
      project_id uuid not null references projects(id) on delete cascade,
      policy_id uuid not null references secret_approval_policies(id) on delete cascade,
      folder_id uuid not null references secret_folders(id) on delete cascade,
      environment text not null,
      secret_path text not null,
      status text not null default 'open',
      has_merged boolean not null default false,
      conflicts jsonb not null default '[]',
      committer_type text not null,
      committer_id uuid not null,
      status_changed_by_type text,
      status_changed_by_id uuid,
      bypass_reason text,
      merged_at timestamptz,
      ${TIMESTAMPS})`,
    `create index secret_approval_requests_project_idx on secret_approval_requests (project_id, created_at desc)`,
    `create index secret_approval_requests_policy_idx on secret_approval_requests (policy_id)`,
    `create table secret_approval_request_commits (${ID},
      request_id uuid not null references secret_approval_requests(id) on delete cascade,
      position int not null,
      op text not null,
      secret_key text not null,
      new_secret_key text,
      secret_id uuid,
      secret_version int,
      encrypted_value text,
      encrypted_comment text,
      tag_ids jsonb,
      metadata jsonb,
      skip_multiline_encoding boolean,
      unique (request_id, position))`,
    `create table secret_approval_reviews (${ID},
      request_id uuid not null references secret_approval_requests(id) on delete cascade,
      reviewer_type text not null,
      reviewer_id uuid not null,
      status text not null,
      comment text,
      ${TIMESTAMPS},
      unique (request_id, reviewer_type, reviewer_id))`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table secret_approval_reviews",
    "drop table secret_approval_request_commits",
    "drop table secret_approval_requests",
    "drop table secret_approval_policy_principals",
    "drop table secret_approval_policy_environments",
    "drop table secret_approval_policies",
  ]);
