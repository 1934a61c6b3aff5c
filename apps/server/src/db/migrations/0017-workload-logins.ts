import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * JWT, AWS IAM and Azure auth settings, one row per `identity_auth_configs` row and deleted with it.
 * JWT public keys and the JWKS CA are SecretBox ciphertexts bound to the config id.
 */
const CONFIG_KEY = "auth_config_id uuid primary key references identity_auth_configs(id) on delete cascade";

export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table identity_jwt_auths (${CONFIG_KEY},
      configuration_type text not null, jwks_url text not null default '',
      encrypted_jwks_ca_cert text, encrypted_public_keys text,
      bound_issuer text not null default '', bound_audiences text not null default '',
      bound_claims jsonb not null default '{}'::jsonb, bound_subject text not null default '')`,
    `create table identity_aws_auths (${CONFIG_KEY},
      type text not null default 'iam', sts_endpoint text not null,
      allowed_principal_arns text not null default '', allowed_account_ids text not null default '')`,
    `create table identity_azure_auths (${CONFIG_KEY},
      tenant_id text not null, resource text not null, allowed_service_principal_ids text not null default '')`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table identity_azure_auths",
    "drop table identity_aws_auths",
    "drop table identity_jwt_auths",
  ]);
