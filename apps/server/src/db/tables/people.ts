import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";
import type { StoredPermissionRule } from "./privileges";

/** A person's login at one organization's provider: the provider's subject, or a SCIM userName. */
export interface UserAliasesTable {
  id: Generated<string>;
  user_id: string;
  org_id: string;
  alias_type: string;
  external_id: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface OidcConfigsTable {
  id: Generated<string>;
  org_id: string;
  configuration_type: string;
  issuer: string;
  discovery_url: string;
  authorization_endpoint: string;
  jwks_uri: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  client_id: string;
  /** Sealed with the root key, bound to the row. */
  encrypted_client_secret: string;
  is_active: boolean;
  allowed_email_domains: string;
  manage_group_memberships: boolean;
  jwt_signature_algorithm: string;
  ca_cert: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One sign-in in flight: looked up by the hash of its `state`, used once. */
export interface SsoLoginStatesTable {
  id: Generated<string>;
  state_hash: Buffer;
  nonce_hash: Buffer;
  /** The hash of the sign-in cookie of the browser that started it: another browser cannot finish it. */
  binding_hash: Buffer;
  org_id: string;
  encrypted_code_verifier: string;
  callback_port: number | null;
  /** The command line's one-time value for its loopback listener, handed back with the session. */
  callback_state: string | null;
  expires_at: Date | string;
  used_at: Date | string | null;
  created_at: CreatedAt;
}

/**
 * A provider login waiting for the person to prove the e-mail it claims: the person is known to
 * another organization, so the link is made only with the code sent to that address.
 */
export interface SsoEmailLinksTable {
  id: Generated<string>;
  org_id: string;
  user_id: string;
  alias_type: string;
  external_id: string;
  email: string;
  first_name: string;
  last_name: string;
  /** The provider's groups claim, when the organization lets it manage group memberships. */
  groups: Json<string[]> | null;
  /** The hash of the link cookie of the browser that signed in. */
  binding_hash: Buffer;
  /** sha256 of the browser binding and the code: the stored hash alone does not give the code away. */
  code_hash: Buffer;
  attempts: Generated<number>;
  callback_port: number | null;
  callback_state: string | null;
  expires_at: Date | string;
  used_at: Date | string | null;
  created_at: CreatedAt;
}

export interface UserSessionsTable {
  id: Generated<string>;
  /** The family's root session: its own id for a sign-in, the sign-in's for a session started from it. */
  family_id: string;
  user_id: string;
  org_id: string;
  auth_method: string;
  ip: string;
  user_agent: string;
  idle_expires_at: Date | string;
  absolute_expires_at: Date | string;
  revoked_at: Date | string | null;
  revoke_reason: string | null;
  last_used_at: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Every refresh token a session ever had, by hash: a used one presented again revokes the session. */
export interface UserSessionRefreshTokensTable {
  token_hash: Buffer;
  session_id: string;
  used_at: Date | string | null;
  created_at: CreatedAt;
}

export interface UserProjectAdditionalPrivilegesTable {
  id: Generated<string>;
  membership_id: string;
  user_id: string;
  project_id: string;
  slug: string;
  permissions: Json<StoredPermissionRule[]>;
  is_temporary: Generated<boolean>;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | string | null;
  temporary_access_end_time: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Set when an approved access request granted it: only revoking the request removes it. */
  access_request_id: string | null;
}

export interface PeopleTables {
  user_aliases: UserAliasesTable;
  oidc_configs: OidcConfigsTable;
  sso_login_states: SsoLoginStatesTable;
  sso_email_links: SsoEmailLinksTable;
  user_sessions: UserSessionsTable;
  user_session_refresh_tokens: UserSessionRefreshTokensTable;
  user_project_additional_privileges: UserProjectAdditionalPrivilegesTable;
  scim_tokens: ScimTokensTable;
}

/** An organization's SCIM bearer token: only its hash is kept; `expires_at` null never expires. */
export interface ScimTokensTable {
  id: Generated<string>;
  org_id: string;
  token_hash: Buffer;
  description: string;
  ttl_days: number;
  expires_at: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}
