import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Access requests. A policy names the environments and the path (a glob) it covers, its approvers
 * and bypassers (people, groups or machine identities) and how many approvals it takes. Deleting a
 * policy archives it (`deleted_at`): its requests keep pointing at it. A request holds what was
 * asked for (`permissions` as sent, `rules` expanded) and who asked; its reviews are one per
 * reviewer. The access an approved request grants is an ordinary additional privilege of the
 * requester whose `access_request_id` points back at the request; the unique index allows one.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table access_approval_policies (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      name text not null,
      secret_path text not null default '/',
      approvals int not null default 1,
      enforcement_level text not null default 'hard' check (enforcement_level in ('hard', 'soft')),
      allowed_self_approvals boolean not null default false,
      max_time_period text,
      request_expiration_time text,
      deleted_at timestamptz,
      ${TIMESTAMPS})`,
    `create unique index access_approval_policies_name_idx on access_approval_policies (project_id, name)
      where deleted_at is null`,
    `create table access_approval_policy_environments (
      policy_id uuid not null references access_approval_policies(id) on delete cascade,
      env_id uuid not null references environments(id) on delete cascade,
      primary key (policy_id, env_id))`,
    `create index access_approval_policy_environments_env_idx on access_approval_policy_environments (env_id)`,
    `create table access_approval_policy_principals (${ID},
      policy_id uuid not null references access_approval_policies(id) on delete cascade,
      role text not null check (role in ('approver', 'bypasser')),
      principal_type text not null check (principal_type in ('user', 'identity', 'group')),
      user_id uuid references users(id) on delete cascade,
      identity_id uuid references identities(id) on delete cascade,
      group_id uuid references groups(id) on delete cascade,
      position int not null default 0,
      created_at timestamptz not null default now(),
      check (num_nonnulls(user_id, identity_id, group_id) = 1))`,
    `create index access_approval_policy_principals_policy_idx on access_approval_policy_principals (policy_id)`,
    `create table access_approval_requests (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      policy_id uuid not null references access_approval_policies(id) on delete cascade,
      env_id uuid references environments(id) on delete set null,
      env_slug text not null,
      env_name text not null,
      secret_path text not null,
      permissions jsonb not null,
      rules jsonb not null,
      is_temporary boolean not null,
      temporary_range text,
      requester_type text not null check (requester_type in ('user', 'identity')),
      requested_by_user_id uuid references users(id) on delete cascade,
      requested_by_identity_id uuid references identities(id) on delete cascade,
      status text not null default 'pending',
      expires_at timestamptz,
      approved_at timestamptz,
      revoked_at timestamptz,
      revoked_by_user_id uuid references users(id) on delete set null,
      revoked_by_identity_id uuid references identities(id) on delete set null,
      ${TIMESTAMPS},
      check (num_nonnulls(requested_by_user_id, requested_by_identity_id) = 1))`,
    `create index access_approval_requests_project_idx on access_approval_requests (project_id, created_at)`,
    `create index access_approval_requests_policy_idx on access_approval_requests (policy_id)`,
    `create table access_approval_reviews (${ID},
      request_id uuid not null references access_approval_requests(id) on delete cascade,
      reviewer_type text not null check (reviewer_type in ('user', 'identity')),
      reviewer_user_id uuid references users(id) on delete cascade,
      reviewer_identity_id uuid references identities(id) on delete cascade,
      status text not null check (status in ('approved', 'rejected')),
      bypass_reason text,
      created_at timestamptz not null default now(),
      unique (request_id, reviewer_user_id),
      unique (request_id, reviewer_identity_id),
      check (num_nonnulls(reviewer_user_id, reviewer_identity_id) = 1))`,
    `alter table user_project_additional_privileges
      add column access_request_id uuid references access_approval_requests(id) on delete cascade`,
    `create unique index user_project_additional_privileges_request_idx
      on user_project_additional_privileges (access_request_id) where access_request_id is not null`,
    `alter table identity_project_additional_privileges
      add column access_request_id uuid references access_approval_requests(id) on delete cascade`,
    `create unique index identity_project_additional_privileges_request_idx
      on identity_project_additional_privileges (access_request_id) where access_request_id is not null`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "alter table identity_project_additional_privileges drop column access_request_id",
    "alter table user_project_additional_privileges drop column access_request_id",
    "drop table access_approval_reviews",
    "drop table access_approval_requests",
    "drop table access_approval_policy_principals",
    "drop table access_approval_policy_environments",
    "drop table access_approval_policies",
  ]);
