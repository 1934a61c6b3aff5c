import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * The audit log. Events are never tied to the rows they describe by foreign keys: a deleted project
 * or identity keeps its history. Each chain (a project's events, or an organization's events outside
 * any project) is a hash chain: `seq` counts up without gaps, `prev_hash` links to the event before,
 * and `audit_log_chains` holds the head that writers lock to append, so concurrent writers can never
 * fork a chain. Streams deliver through an outbox filled in the same transaction as the event.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table audit_log_chains (
      chain_id uuid primary key,
      org_id uuid,
      seq bigint not null,
      hash text not null,
      pruned_seq bigint not null default 0,
      pruned_hash text not null)`,
    `create table audit_logs (
      id uuid primary key,
      org_id uuid,
      project_id uuid,
      project_name text,
      chain_id uuid not null,
      seq bigint not null,
      actor_type text not null,
      actor_id text,
      actor_metadata jsonb not null,
      event_type text not null,
      event_metadata jsonb not null,
      ip_address text,
      user_agent text,
      user_agent_type text,
      created_at timestamptz not null,
      expires_at timestamptz,
      prev_hash text not null,
      hash text not null,
      constraint audit_logs_chain_seq_key unique (chain_id, seq))`,
    `create index audit_logs_org_created_idx on audit_logs (org_id, created_at desc, id desc)`,
    `create index audit_logs_project_created_idx on audit_logs (project_id, created_at desc, id desc) where project_id is not null`,
    `create index audit_logs_org_type_created_idx on audit_logs (org_id, event_type, created_at desc)`,
    `create index audit_logs_org_actor_created_idx on audit_logs (org_id, actor_id, created_at desc)`,
    `create index audit_logs_org_secret_key_idx on audit_logs (org_id, (event_metadata->>'secretKey'), created_at desc)`,
    `create index audit_logs_org_secret_path_idx on audit_logs (org_id, (event_metadata->>'secretPath'), created_at desc)`,
    `create index audit_logs_event_metadata_idx on audit_logs using gin (event_metadata jsonb_path_ops)`,
    `create index audit_logs_expires_idx on audit_logs (expires_at)`,
    `create table audit_log_streams (
      id uuid primary key default gen_random_uuid(),
      org_id uuid not null references organizations(id) on delete cascade,
      provider text not null,
      url text not null,
      header_names jsonb not null default '[]'::jsonb,
      encrypted_headers text not null,
      encrypted_signing_secret text not null,
      claimed_until timestamptz,
      next_attempt_at timestamptz not null default now(),
      attempts int not null default 0,
      last_error text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`,
    `create index audit_log_streams_org_id_idx on audit_log_streams (org_id)`,
    `create table audit_log_outbox (
      id bigint generated always as identity primary key,
      stream_id uuid not null references audit_log_streams(id) on delete cascade,
      event_id uuid not null,
      created_at timestamptz not null default now())`,
    `create index audit_log_outbox_stream_idx on audit_log_outbox (stream_id, id)`,
    `alter table projects add column audit_logs_retention_days int`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `alter table projects drop column audit_logs_retention_days`,
    `drop table audit_log_outbox`,
    `drop table audit_log_streams`,
    `drop table audit_logs`,
    `drop table audit_log_chains`,
  ]);
