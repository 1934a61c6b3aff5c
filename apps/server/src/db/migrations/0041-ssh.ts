import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * The SSH certificate authority: CAs (the private key sealed under the root key, the public key line in
 * clear so the unauthenticated routes never open anything; `krl_version` counts revocations and only
 * grows), certificate templates, hosts with their login mappings, a project's default user and host CAs,
 * and the record of every certificate signed (serial unique per CA, with its revocation).
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table ssh_cas (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      friendly_name text not null,
      status text not null default 'active' check (status in ('active', 'disabled')),
      key_algorithm text not null,
      key_source text not null default 'internal',
      public_key text not null,
      encrypted_private_key text not null,
      krl_version bigint not null default 0,
      ${TIMESTAMPS})`,
    `create index ssh_cas_project_idx on ssh_cas (project_id)`,
    `create table ssh_certificate_templates (${ID},
      ssh_ca_id uuid not null references ssh_cas(id) on delete cascade,
      project_id uuid not null references projects(id) on delete cascade,
      name text not null,
      status text not null default 'active' check (status in ('active', 'disabled')),
      ttl text not null,
      max_ttl text not null,
      allowed_users jsonb not null,
      allowed_hosts jsonb not null,
      allow_user_certificates boolean not null,
      allow_host_certificates boolean not null,
      allow_custom_key_ids boolean not null,
      ${TIMESTAMPS},
      constraint ssh_certificate_templates_name_key unique (project_id, name))`,
    `create index ssh_certificate_templates_ca_idx on ssh_certificate_templates (ssh_ca_id)`,
    `create table ssh_hosts (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      hostname text not null,
      alias text not null default '',
      user_cert_ttl text not null,
      host_cert_ttl text not null,
      user_ssh_ca_id uuid not null references ssh_cas(id) on delete restrict,
      host_ssh_ca_id uuid not null references ssh_cas(id) on delete restrict,
      login_mappings jsonb not null default '[]'::jsonb,
      ${TIMESTAMPS},
      constraint ssh_hosts_hostname_key unique (project_id, hostname))`,
    `create table project_ssh_configs (
      project_id uuid primary key references projects(id) on delete cascade,
      default_user_ssh_ca_id uuid references ssh_cas(id) on delete set null,
      default_host_ssh_ca_id uuid references ssh_cas(id) on delete set null)`,
    `create table ssh_certificates (${ID},
      ssh_ca_id uuid not null references ssh_cas(id) on delete cascade,
      project_id uuid not null references projects(id) on delete cascade,
      ssh_certificate_template_id uuid references ssh_certificate_templates(id) on delete set null,
      ssh_host_id uuid references ssh_hosts(id) on delete set null,
      serial_number bigint not null,
      cert_type text not null,
      principals jsonb not null,
      key_id text not null,
      not_before timestamptz not null,
      not_after timestamptz not null,
      revoked_at timestamptz,
      revocation_reason text,
      created_at timestamptz not null default now(),
      constraint ssh_certificates_serial_key unique (ssh_ca_id, serial_number))`,
    `create index ssh_certificates_project_idx on ssh_certificates (project_id, created_at desc, id)`,
    `create index ssh_certificates_revoked_idx on ssh_certificates (ssh_ca_id, serial_number) where revoked_at is not null`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table ssh_certificates",
    "drop table project_ssh_configs",
    "drop table ssh_hosts",
    "drop table ssh_certificate_templates",
    "drop table ssh_cas",
  ]);
