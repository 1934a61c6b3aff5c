import type { ColumnType, Generated } from "kysely";

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
/** jsonb: written as a JSON string or value, read back parsed. */
export type Json<T> = ColumnType<T, string, string>;

export interface InstanceConfigTable {
  id: Generated<number>;
  admin_user_id: string;
  admin_identity_id: string;
  initialized_at: Generated<Date>;
}

export interface OrganizationsTable {
  id: Generated<string>;
  name: string;
  slug: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: Generated<string>;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  super_admin: Generated<boolean>;
  /** Unused since sign-in moved to OpenID Connect; kept for rows written before. */
  password_hash: string | null;
  is_email_verified: Generated<boolean>;
  is_active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface OrgUserMembershipsTable {
  id: Generated<string>;
  org_id: string;
  /** Null while an invitation waits for the person to sign in with `invite_email`. */
  user_id: string | null;
  role: string;
  status: Generated<"invited" | "accepted">;
  /** False once SCIM deactivates the person: they cannot act in the organization. */
  is_active: Generated<boolean>;
  invite_email: string | null;
  invite_expires_at: Date | string | null;
  /** Projects the invitation adds the person to (as members) when it is claimed. */
  invited_project_ids: ColumnType<string[], string | undefined, string>;
  last_invited_at: Date | string | null;
  /** The names this organization's provider or SCIM client gave the person (null: the person's own). */
  first_name: string | null;
  last_name: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ProjectsTable {
  id: Generated<string>;
  org_id: string;
  name: string;
  slug: string;
  description: string | null;
  type: string;
  /** Bumped by every change that feeds abilities in the project (roles, memberships, privileges, groups). */
  permission_version: Generated<string>;
  /** Days this project's audit events are kept, when shorter than the instance default. */
  audit_logs_retention_days: Generated<number | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface EnvironmentsTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  slug: string;
  position: number;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentitiesTable {
  id: Generated<string>;
  org_id: string;
  project_id: string | null;
  name: string;
  org_role: string;
  has_delete_protection: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentityMetadataTable {
  id: Generated<string>;
  identity_id: string;
  key: string;
  value: string;
  created_at: CreatedAt;
}

export interface ProjectRolesTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  slug: string;
  description: string | null;
  permissions: Json<unknown[]>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentityProjectMembershipsTable {
  id: Generated<string>;
  project_id: string;
  identity_id: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface MembershipRoleColumns {
  id: Generated<string>;
  role: string;
  custom_role_id: string | null;
  is_temporary: Generated<boolean>;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | string | null;
  temporary_access_end_time: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentityProjectMembershipRolesTable extends MembershipRoleColumns {
  membership_id: string;
}

export interface GroupsTable {
  id: Generated<string>;
  org_id: string;
  name: string;
  slug: string;
  role: Generated<string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface GroupIdentityMembersTable {
  id: Generated<string>;
  group_id: string;
  identity_id: string;
  created_at: CreatedAt;
}

export interface GroupUserMembersTable {
  id: Generated<string>;
  group_id: string;
  user_id: string;
  created_at: CreatedAt;
}

export interface GroupProjectMembershipsTable {
  id: Generated<string>;
  group_id: string;
  project_id: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface GroupProjectMembershipRolesTable extends MembershipRoleColumns {
  membership_id: string;
}

export interface SecretFoldersTable {
  id: Generated<string>;
  env_id: string;
  parent_id: string | null;
  name: string;
  description: string | null;
  version: Generated<number>;
  is_reserved: Generated<boolean>;
  last_secret_modified: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentityAuthConfigsTable {
  id: Generated<string>;
  identity_id: string;
  method: string;
  access_token_ttl: number;
  access_token_max_ttl: number;
  access_token_num_uses_limit: number;
  access_token_trusted_ips: Json<{ ipAddress: string; type: "ipv4" | "ipv6"; prefix?: number }[]>;
  access_token_period: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IdentityAccessTokensTable {
  id: Generated<string>;
  identity_id: string;
  auth_config_id: string;
  token_hash: Buffer;
  name: string | null;
  auth_method: string;
  access_token_ttl: number;
  access_token_max_ttl: number;
  access_token_num_uses: Generated<number>;
  access_token_num_uses_limit: number;
  access_token_period: Generated<number>;
  last_used_at: Date | string | null;
  last_renewed_at: Date | string | null;
  is_revoked: Generated<boolean>;
  client_secret_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface FoundationTables {
  instance_config: InstanceConfigTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  org_user_memberships: OrgUserMembershipsTable;
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  identities: IdentitiesTable;
  identity_metadata: IdentityMetadataTable;
  project_roles: ProjectRolesTable;
  identity_project_memberships: IdentityProjectMembershipsTable;
  identity_project_membership_roles: IdentityProjectMembershipRolesTable;
  groups: GroupsTable;
  group_identity_members: GroupIdentityMembersTable;
  group_user_members: GroupUserMembersTable;
  group_project_memberships: GroupProjectMembershipsTable;
  group_project_membership_roles: GroupProjectMembershipRolesTable;
  secret_folders: SecretFoldersTable;
  identity_auth_configs: IdentityAuthConfigsTable;
  identity_access_tokens: IdentityAccessTokensTable;
}
