import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Method-specific settings of identity auth methods, one row per `identity_auth_configs` row and
 * deleted with it. Secret columns hold SecretBox ciphertexts bound to the config id.
 */
const CONFIG_KEY = "auth_config_id uuid primary key references identity_auth_configs(id) on delete cascade";
const LOCKOUT_COLUMNS = `lockout_enabled boolean not null default true, lockout_threshold int not null default 3,
      lockout_duration_seconds int not null default 300, lockout_counter_reset_seconds int not null default 30`;

export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table identity_universal_auths (${CONFIG_KEY},
      client_id uuid not null unique default gen_random_uuid(),
      client_secret_trusted_ips jsonb not null, ${LOCKOUT_COLUMNS})`,
    `create table identity_ua_client_secrets (${ID},
      auth_config_id uuid not null references identity_auth_configs(id) on delete cascade,
      description text not null default '',
      client_secret_prefix text not null,
      client_secret_hash bytea not null unique,
      client_secret_num_uses int not null default 0,
      client_secret_num_uses_limit int not null default 0,
      client_secret_ttl int not null default 0,
      is_client_secret_revoked boolean not null default false, ${TIMESTAMPS})`,
    `create index identity_ua_client_secrets_auth_config_id_idx on identity_ua_client_secrets (auth_config_id)`,
    `alter table identity_access_tokens add constraint identity_access_tokens_client_secret_id_fkey
      foreign key (client_secret_id) references identity_ua_client_secrets(id) on delete set null`,
    `create index identity_access_tokens_client_secret_id_idx on identity_access_tokens (client_secret_id)`,
    `create table identity_ldap_auths (${CONFIG_KEY},
      url text not null, search_base text not null, search_filter text not null,
      encrypted_bind_dn text not null, encrypted_bind_pass text not null, encrypted_ca_cert text,
      allowed_fields jsonb, template_id uuid, ${LOCKOUT_COLUMNS})`,
    `create table identity_kubernetes_auths (${CONFIG_KEY},
      kubernetes_host text, token_review_mode text not null default 'api',
      allowed_namespaces text not null default '', allowed_names text not null default '',
      allowed_audience text not null default '',
      encrypted_ca_cert text, encrypted_token_reviewer_jwt text,
      gateway_id uuid, gateway_pool_id uuid, template_id uuid,
      verify_tls_certificate boolean not null default false)`,
    `create table identity_oidc_auths (${CONFIG_KEY},
      oidc_discovery_url text not null, bound_issuer text not null,
      bound_audiences text not null default '', bound_claims jsonb not null default '{}'::jsonb,
      claim_metadata_mapping jsonb, bound_subject text not null default '', encrypted_ca_cert text)`,
    `create table identity_gcp_auths (${CONFIG_KEY},
      type text not null, allowed_service_accounts text not null default '',
      allowed_projects text not null default '', allowed_zones text not null default '')`,
    `create table identity_auth_lockouts (${ID},
      auth_config_id uuid not null references identity_auth_configs(id) on delete cascade,
      lockout_key text not null,
      failed_attempts int not null default 0,
      window_expires_at timestamptz not null,
      locked_until timestamptz,
      unique (auth_config_id, lockout_key))`,
    `create table identity_access_token_claims (
      token_id uuid primary key references identity_access_tokens(id) on delete cascade,
      auth_method text not null, claims jsonb not null)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table identity_access_token_claims",
    "drop table identity_auth_lockouts",
    "drop table identity_gcp_auths",
    "drop table identity_oidc_auths",
    "drop table identity_kubernetes_auths",
    "drop table identity_ldap_auths",
    "drop index identity_access_tokens_client_secret_id_idx",
    "alter table identity_access_tokens drop constraint identity_access_tokens_client_secret_id_fkey",
    "drop table identity_ua_client_secrets",
    "drop table identity_universal_auths",
  ]);
