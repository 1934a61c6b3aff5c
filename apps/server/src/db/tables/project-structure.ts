import type { Generated } from "kysely";
import type { CreatedAt, Json, MembershipRoleColumns, Timestamp } from "./foundation";

export interface SecretImportsTable {
  id: Generated<string>;
  folder_id: string;
  import_env: string;
  import_path: string;
  position: number;
  version: Generated<number>;
  is_replication: Generated<boolean>;
  is_replication_success: boolean | null;
  replication_status: string | null;
  last_replicated: Date | string | null;
  is_reserved: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** A template role as stored: rules in the unpacked form. */
export type TemplateRoleRow = {
  name: string;
  slug: string;
  permissions: { subject: string; action: string[]; inverted: boolean; conditions?: Record<string, unknown> }[];
};
export type TemplateEnvironmentRow = { name: string; slug: string; position: number };
export type TemplateManagedIdentityRow = { name: string; roles: string[] };

export interface ProjectTemplatesTable {
  id: Generated<string>;
  org_id: string;
  name: string;
  description: string | null;
  type: string;
  roles: Json<TemplateRoleRow[]>;
  environments: Json<TemplateEnvironmentRow[] | null>;
  project_managed_identities: Json<TemplateManagedIdentityRow[] | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ProjectTemplateUserMembershipsTable {
  id: Generated<string>;
  template_id: string;
  org_membership_id: string;
  roles: Json<string[]>;
  created_at: CreatedAt;
}

export interface ProjectTemplateGroupMembershipsTable {
  id: Generated<string>;
  template_id: string;
  group_id: string;
  roles: Json<string[]>;
  created_at: CreatedAt;
}

export interface ProjectTemplateIdentityMembershipsTable {
  id: Generated<string>;
  template_id: string;
  identity_id: string;
  roles: Json<string[]>;
  created_at: CreatedAt;
}

export interface ProjectUserMembershipsTable {
  id: Generated<string>;
  project_id: string;
  user_id: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ProjectUserMembershipRolesTable extends MembershipRoleColumns {
  membership_id: string;
}

export interface ProjectStructureTables {
  secret_imports: SecretImportsTable;
  project_templates: ProjectTemplatesTable;
  project_template_user_memberships: ProjectTemplateUserMembershipsTable;
  project_template_group_memberships: ProjectTemplateGroupMembershipsTable;
  project_template_identity_memberships: ProjectTemplateIdentityMembershipsTable;
  project_user_memberships: ProjectUserMembershipsTable;
  project_user_membership_roles: ProjectUserMembershipRolesTable;
}
