import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Versioned root keys. `root_keys` holds each version's material sealed by the seal (ENCRYPTION_KEY's
 * key-encryption key or an HSM key); a retired version keeps its row with the material erased.
 * `root_key_rotations` records each online rotation (one running at a time) and its re-wrap cursor;
 * `instance_secrets` holds values sealed under the root key that are not a module's (the derivation
 * secret purpose keys come from).
 *
 * Every column sealed straight under the root key gets a guard: a value written under a retired
 * version is refused (SQLSTATE 55KW1), and the check takes a share lock on that version's row, so
 * retiring a version (which locks the row for update, then re-counts) waits for every writer using it.
 * The column lists here are the registry of `modules/root-keys/sealed-columns.ts` at this migration.
 */
const GUARDED: readonly (readonly [string, readonly string[]])[] = [
  ["project_data_keys", ["wrapped_key"]],
  ["app_connections", ["encrypted_credentials"]],
  ["audit_log_streams", ["encrypted_headers", "encrypted_signing_secret"]],
  ["dynamic_secrets", ["encrypted_inputs"]],
  ["identity_jwt_auths", ["encrypted_jwks_ca_cert", "encrypted_public_keys"]],
  ["identity_kubernetes_auths", ["encrypted_ca_cert", "encrypted_token_reviewer_jwt"]],
  ["identity_ldap_auths", ["encrypted_bind_dn", "encrypted_bind_pass", "encrypted_ca_cert"]],
  ["identity_oidc_auths", ["encrypted_ca_cert"]],
  ["oidc_configs", ["encrypted_client_secret"]],
  ["pki_certificate_authorities", ["encrypted_private_key"]],
  ["pki_certificates", ["encrypted_private_key"]],
  ["pki_enrollment_configs", ["encrypted_secret"]],
  ["pki_scep_ras", ["encrypted_private_key"]],
  ["ssh_cas", ["encrypted_private_key"]],
  ["sso_login_states", ["encrypted_code_verifier"]],
  ["instance_secrets", ["sealed"]],
];

export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table root_keys (
      version integer primary key check (version > 0),
      sealed text,
      sealed_by text not null check (sealed_by in ('SOFTWARE', 'HSM')),
      seal_fingerprint text not null,
      state text not null check (state in ('active', 'retiring', 'retired')),
      created_at timestamptz not null default now(),
      retired_at timestamptz,
      check ((state = 'retired') = (sealed is null)))`,
    `create unique index root_keys_one_active on root_keys ((true)) where state = 'active'`,
    `create table root_key_rotations (
      id uuid primary key default gen_random_uuid(),
      from_version integer not null,
      to_version integer not null references root_keys(version),
      status text not null check (status in ('running', 'completed', 'failed')),
      total integer not null,
      rewrapped integer not null default 0,
      cursor jsonb not null default '{}'::jsonb,
      error text,
      org_id uuid references organizations(id) on delete set null,
      lease_owner text,
      lease_until timestamptz,
      started_at timestamptz not null default now(),
      completed_at timestamptz)`,
    `create unique index root_key_rotations_one_running on root_key_rotations ((true)) where status = 'running'`,
    `create table instance_secrets (
      name text primary key,
      sealed text not null,
      created_at timestamptz not null default now())`,
    `create function keyward_root_sealed_guard() returns trigger language plpgsql as $$
      declare
        col text;
        value text;
        ver integer;
        st text;
      begin
        foreach col in array tg_argv loop
          value := to_jsonb(new) ->> col;
          if value is null then continue; end if;
          if value like 'v1:%' then ver := 1;
          elsif value ~ '^v2:[0-9]{1,9}:' then ver := split_part(value, ':', 2)::integer;
          else continue;
          end if;
          select state into st from root_keys where version = ver for share;
          if st = 'retired' then
            raise exception 'root key version % is retired', ver using errcode = '55KW1';
          end if;
        end loop;
        return new;
      end $$`,
    `create function keyward_root_keys_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify('keyward_root_keys', new.version::text);
        return null;
      end $$`,
    `create trigger root_keys_notify after insert or update on root_keys
      for each row execute function keyward_root_keys_notify()`,
    ...GUARDED.map(
      ([table, columns]) =>
        `create trigger ${table}_root_sealed_guard before insert or update of ${columns.join(", ")} on ${table}
          for each row execute function keyward_root_sealed_guard(${columns.map((c) => `'${c}'`).join(", ")})`,
    ),
  ]);
