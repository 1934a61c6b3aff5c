import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * People: users sign in through their organization's OpenID Connect provider (no passwords of
 * Keyward's own), hold org and project memberships like identities do, and keep sessions whose
 * refresh tokens rotate. Secrets (client secrets, PKCE verifiers) are sealed; tokens, states and
 * nonces are stored only as hashes.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `alter table users alter column password_hash drop not null`,
    `alter table users add column is_email_verified boolean not null default false`,
    `alter table users add column is_active boolean not null default true`,
    `create unique index users_email_idx on users (lower(email))`,
    `alter table org_user_memberships alter column user_id drop not null`,
    `alter table org_user_memberships add column status text not null default 'accepted'
      check (status in ('invited', 'accepted'))`,
    `alter table org_user_memberships add column is_active boolean not null default true`,
    `alter table org_user_memberships add column invite_email text`,
    `alter table org_user_memberships add column invite_expires_at timestamptz`,
    `alter table org_user_memberships add column invited_project_ids jsonb not null default '[]'`,
    `alter table org_user_memberships add column last_invited_at timestamptz`,
    `alter table org_user_memberships add constraint org_user_memberships_actor check (
      (status = 'accepted' and user_id is not null) or (status = 'invited' and invite_email is not null))`,
    `create unique index org_user_memberships_invite_idx on org_user_memberships (org_id, lower(invite_email))
      where status = 'invited'`,
    `create table user_aliases (${ID},
      user_id uuid not null references users(id) on delete cascade,
      org_id uuid not null references organizations(id) on delete cascade,
      alias_type text not null, external_id text not null,
      ${TIMESTAMPS}, unique (org_id, alias_type, external_id))`,
    `create index user_aliases_user_id_idx on user_aliases (user_id)`,
    `create table oidc_configs (${ID},
      org_id uuid not null unique references organizations(id) on delete cascade,
      configuration_type text not null, issuer text not null default '', discovery_url text not null default '',
      authorization_endpoint text not null default '', jwks_uri text not null default '',
      token_endpoint text not null default '', userinfo_endpoint text not null default '',
      client_id text not null, encrypted_client_secret text not null,
      is_active boolean not null, allowed_email_domains text not null default '',
      manage_group_memberships boolean not null default false,
      jwt_signature_algorithm text not null default 'RS256', ca_cert text,
      ${TIMESTAMPS})`,
    `create table sso_login_states (${ID},
      state_hash bytea not null unique, nonce_hash bytea not null, binding_hash bytea not null,
      org_id uuid not null references organizations(id) on delete cascade,
      encrypted_code_verifier text not null, callback_port int, callback_state text,
      expires_at timestamptz not null, used_at timestamptz,
      created_at timestamptz not null default now())`,
    `create index sso_login_states_expires_at_idx on sso_login_states (expires_at)`,
    `create table user_sessions (${ID},
      user_id uuid not null references users(id) on delete cascade,
      org_id uuid not null references organizations(id) on delete cascade,
      auth_method text not null, ip text not null default '', user_agent text not null default '',
      idle_expires_at timestamptz not null, absolute_expires_at timestamptz not null,
      revoked_at timestamptz, revoke_reason text, last_used_at timestamptz,
      ${TIMESTAMPS})`,
    `create index user_sessions_user_id_idx on user_sessions (user_id)`,
    `create table user_session_refresh_tokens (
      token_hash bytea primary key,
      session_id uuid not null references user_sessions(id) on delete cascade,
      used_at timestamptz, created_at timestamptz not null default now())`,
    `create index user_session_refresh_tokens_session_id_idx on user_session_refresh_tokens (session_id)`,
    `create table user_project_additional_privileges (${ID},
      membership_id uuid not null references project_user_memberships(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      project_id uuid not null references projects(id) on delete cascade,
      slug text not null, permissions jsonb not null default '[]'::jsonb,
      is_temporary boolean not null default false, temporary_mode text, temporary_range text,
      temporary_access_start_time timestamptz, temporary_access_end_time timestamptz,
      ${TIMESTAMPS}, unique (membership_id, slug))`,
    `create index user_project_additional_privileges_user_idx on user_project_additional_privileges (user_id, project_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table user_project_additional_privileges",
    "drop table user_session_refresh_tokens",
    "drop table user_sessions",
    "drop table sso_login_states",
    "drop table oidc_configs",
    "drop table user_aliases",
    "drop index org_user_memberships_invite_idx",
    `alter table org_user_memberships drop constraint org_user_memberships_actor`,
    ...["status", "is_active", "invite_email", "invite_expires_at", "invited_project_ids", "last_invited_at"].map(
      (c) => `alter table org_user_memberships drop column ${c}`,
    ),
    "drop index users_email_idx",
    `alter table users drop column is_email_verified`,
    `alter table users drop column is_active`,
  ]);
