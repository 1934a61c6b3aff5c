import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

export interface SshCasTable {
  id: Generated<string>;
  project_id: string;
  friendly_name: string;
  status: Generated<string>;
  key_algorithm: string;
  key_source: Generated<string>;
  /** The OpenSSH public key line, in clear. */
  public_key: string;
  /** PKCS#8 PEM sealed under the root key, associated data `ssh-ca:<id>`. */
  encrypted_private_key: string;
  /** How many revocations the CA has ever had (int8, so a string): the KRL's version. */
  krl_version: Generated<string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SshCertificateTemplatesTable {
  id: Generated<string>;
  ssh_ca_id: string;
  project_id: string;
  name: string;
  status: Generated<string>;
  ttl: string;
  max_ttl: string;
  allowed_users: Json<string[]>;
  allowed_hosts: Json<string[]>;
  allow_user_certificates: boolean;
  allow_host_certificates: boolean;
  allow_custom_key_ids: boolean;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type StoredLoginMapping = { loginUser: string; usernames: string[]; groups: string[] };

export interface SshHostsTable {
  id: Generated<string>;
  project_id: string;
  hostname: string;
  alias: Generated<string>;
  user_cert_ttl: string;
  host_cert_ttl: string;
  user_ssh_ca_id: string;
  host_ssh_ca_id: string;
  login_mappings: Json<StoredLoginMapping[]>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SshHostGroupsTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  login_mappings: Json<StoredLoginMapping[]>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SshHostGroupMembershipsTable {
  ssh_host_group_id: string;
  ssh_host_id: string;
  created_at: CreatedAt;
}

export interface ProjectSshConfigsTable {
  project_id: string;
  default_user_ssh_ca_id: string | null;
  default_host_ssh_ca_id: string | null;
}

export interface SshCertificatesTable {
  id: Generated<string>;
  ssh_ca_id: string;
  project_id: string;
  ssh_certificate_template_id: string | null;
  ssh_host_id: string | null;
  /** int8: a string. */
  serial_number: string;
  cert_type: string;
  principals: Json<string[]>;
  key_id: string;
  not_before: Date | string;
  not_after: Date | string;
  revoked_at: Date | string | null;
  revocation_reason: string | null;
  created_at: CreatedAt;
}

export interface SshTables {
  ssh_cas: SshCasTable;
  ssh_certificate_templates: SshCertificateTemplatesTable;
  ssh_hosts: SshHostsTable;
  ssh_host_groups: SshHostGroupsTable;
  ssh_host_group_memberships: SshHostGroupMembershipsTable;
  project_ssh_configs: ProjectSshConfigsTable;
  ssh_certificates: SshCertificatesTable;
}
