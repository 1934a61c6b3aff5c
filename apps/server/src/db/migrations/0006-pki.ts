import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Internal CAs, certificate profiles with their enrollment configurations, and issued certificates.
 * CA-to-CA and profile-to-CA references use the default NO ACTION so a project's cascade removes a
 * whole hierarchy in one statement, while deleting a CA still in use fails.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table pki_certificate_authorities (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      parent_ca_id uuid references pki_certificate_authorities(id),
      name text not null, type text not null, status text not null,
      friendly_name text, common_name text not null, organization text not null, ou text not null,
      country text not null, province text not null, locality text not null, dn text not null,
      key_algorithm text not null, max_path_length int not null, serial_number text not null,
      not_before timestamptz not null, not_after timestamptz not null,
      certificate_pem text not null, certificate_chain_pem text not null, encrypted_private_key text not null,
      ${TIMESTAMPS}, unique (project_id, name))`,
    `create index pki_certificate_authorities_parent_ca_id_idx on pki_certificate_authorities (parent_ca_id)`,
    `create table pki_certificate_profiles (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      ca_id uuid references pki_certificate_authorities(id),
      slug text not null, description text, enrollment_type text not null, issuer_type text not null,
      defaults jsonb, external_configs jsonb,
      ${TIMESTAMPS}, unique (project_id, slug))`,
    `create index pki_certificate_profiles_ca_id_idx on pki_certificate_profiles (ca_id)`,
    `create index pki_certificate_profiles_project_id_created_at_idx on pki_certificate_profiles (project_id, created_at)`,
    `create table pki_enrollment_configs (${ID},
      profile_id uuid not null references pki_certificate_profiles(id) on delete cascade,
      type text not null, settings jsonb not null default '{}'::jsonb, encrypted_secret text,
      ${TIMESTAMPS}, unique (profile_id, type))`,
    `create table pki_certificates (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      ca_id uuid references pki_certificate_authorities(id) on delete set null,
      profile_id uuid references pki_certificate_profiles(id) on delete set null,
      status text not null default 'active', serial_number text not null,
      common_name text not null, alt_names text not null default '', friendly_name text not null,
      key_algorithm text not null, signature_algorithm text not null,
      key_usages jsonb not null default '[]'::jsonb, extended_key_usages jsonb not null default '[]'::jsonb,
      not_before timestamptz not null, not_after timestamptz not null,
      revoked_at timestamptz, revocation_reason text,
      certificate_pem text not null, issuing_ca_certificate_pem text not null, certificate_chain_pem text not null,
      encrypted_private_key text,
      ${TIMESTAMPS}, unique (ca_id, serial_number))`,
    `create index pki_certificates_project_id_created_at_idx on pki_certificates (project_id, created_at)`,
    `create index pki_certificates_profile_id_idx on pki_certificates (profile_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `drop table if exists pki_certificates`,
    `drop table if exists pki_enrollment_configs`,
    `drop table if exists pki_certificate_profiles`,
    `drop table if exists pki_certificate_authorities`,
  ]);
