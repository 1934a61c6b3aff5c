import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

type TrustedIpJson = Json<{ ipAddress: string; type: "ipv4" | "ipv6"; prefix?: number }[]>;

interface LockoutColumns {
  lockout_enabled: Generated<boolean>;
  lockout_threshold: Generated<number>;
  lockout_duration_seconds: Generated<number>;
  lockout_counter_reset_seconds: Generated<number>;
}

export interface IdentityUniversalAuthsTable extends LockoutColumns {
  auth_config_id: string;
  client_id: Generated<string>;
  client_secret_trusted_ips: TrustedIpJson;
}

export interface IdentityUaClientSecretsTable {
  id: Generated<string>;
  auth_config_id: string;
  description: Generated<string>;
  client_secret_prefix: string;
  client_secret_hash: Buffer;
  client_secret_num_uses: Generated<number>;
  client_secret_num_uses_limit: Generated<number>;
  client_secret_ttl: Generated<number>;
  is_client_secret_revoked: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentityLdapAuthsTable extends LockoutColumns {
  auth_config_id: string;
  url: string;
  search_base: string;
  search_filter: string;
  encrypted_bind_dn: string;
  encrypted_bind_pass: string;
  encrypted_ca_cert: string | null;
  allowed_fields: Json<{ key: string; value: string }[]> | null;
  template_id: string | null;
}

export interface IdentityKubernetesAuthsTable {
  auth_config_id: string;
  kubernetes_host: string | null;
  token_review_mode: Generated<string>;
  allowed_namespaces: Generated<string>;
  allowed_names: Generated<string>;
  allowed_audience: Generated<string>;
  encrypted_ca_cert: string | null;
  encrypted_token_reviewer_jwt: string | null;
  gateway_id: string | null;
  gateway_pool_id: string | null;
  template_id: string | null;
  verify_tls_certificate: Generated<boolean>;
}

export interface IdentityOidcAuthsTable {
  auth_config_id: string;
  oidc_discovery_url: string;
  bound_issuer: string;
  bound_audiences: Generated<string>;
  bound_claims: Json<Record<string, string>>;
  claim_metadata_mapping: Json<Record<string, string>> | null;
  bound_subject: Generated<string>;
  encrypted_ca_cert: string | null;
}

export interface IdentityGcpAuthsTable {
  auth_config_id: string;
  type: string;
  allowed_service_accounts: Generated<string>;
  allowed_projects: Generated<string>;
  allowed_zones: Generated<string>;
}

export interface IdentityJwtAuthsTable {
  auth_config_id: string;
  configuration_type: string;
  jwks_url: Generated<string>;
  encrypted_jwks_ca_cert: string | null;
  encrypted_public_keys: string | null;
  bound_issuer: Generated<string>;
  bound_audiences: Generated<string>;
  bound_claims: Json<Record<string, string>>;
  bound_subject: Generated<string>;
}

export interface IdentityAwsAuthsTable {
  auth_config_id: string;
  type: Generated<string>;
  sts_endpoint: string;
  allowed_principal_arns: Generated<string>;
  allowed_account_ids: Generated<string>;
}

export interface IdentityAzureAuthsTable {
  auth_config_id: string;
  tenant_id: string;
  resource: string;
  allowed_service_principal_ids: Generated<string>;
}

export interface IdentityAuthLockoutsTable {
  id: Generated<string>;
  auth_config_id: string;
  lockout_key: string;
  failed_attempts: Generated<number>;
  window_expires_at: Date | string;
  locked_until: Date | string | null;
}

export interface IdentityAccessTokenClaimsTable {
  token_id: string;
  auth_method: string;
  claims: Json<Record<string, string>>;
}

export interface AuthMethodTables {
  identity_universal_auths: IdentityUniversalAuthsTable;
  identity_ua_client_secrets: IdentityUaClientSecretsTable;
  identity_ldap_auths: IdentityLdapAuthsTable;
  identity_kubernetes_auths: IdentityKubernetesAuthsTable;
  identity_oidc_auths: IdentityOidcAuthsTable;
  identity_gcp_auths: IdentityGcpAuthsTable;
  identity_jwt_auths: IdentityJwtAuthsTable;
  identity_aws_auths: IdentityAwsAuthsTable;
  identity_azure_auths: IdentityAzureAuthsTable;
  identity_auth_lockouts: IdentityAuthLockoutsTable;
  identity_access_token_claims: IdentityAccessTokenClaimsTable;
}
