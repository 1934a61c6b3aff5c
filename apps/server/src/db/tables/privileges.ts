import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

/** Stored rules are in the unpacked form (`action` a list, `inverted` explicit). */
export type StoredPermissionRule = {
  subject: string;
  action: string[];
  inverted: boolean;
  conditions?: Record<string, unknown>;
};

export interface IdentityProjectAdditionalPrivilegesTable {
  id: Generated<string>;
  slug: string;
  membership_id: string;
  project_id: string;
  identity_id: string;
  is_temporary: Generated<boolean>;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | string | null;
  temporary_access_end_time: Date | string | null;
  permissions: Json<StoredPermissionRule[]>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Set when an approved access request granted it: only revoking the request removes it. */
  access_request_id: string | null;
}

export interface PrivilegeTables {
  identity_project_additional_privileges: IdentityProjectAdditionalPrivilegesTable;
}
