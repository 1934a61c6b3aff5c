import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";
import type { StoredPermissionRule } from "./privileges";

export interface AccessApprovalPoliciesTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  secret_path: Generated<string>;
  approvals: Generated<number>;
  /** hard | soft */
  enforcement_level: Generated<string>;
  allowed_self_approvals: Generated<boolean>;
  max_time_period: string | null;
  /** How long a request may stay pending; null: as long as its range. */
  request_expiration_time: string | null;
  /** Set when the policy was deleted: the row stays for its requests. */
  deleted_at: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AccessApprovalPolicyEnvironmentsTable {
  policy_id: string;
  env_id: string;
}

export interface AccessApprovalRequestsTable {
  id: Generated<string>;
  project_id: string;
  policy_id: string;
  env_id: string | null;
  env_slug: string;
  env_name: string;
  secret_path: string;
  /** The rules as requested, in the packed array form. */
  permissions: Json<unknown[]>;
  /** The rules the privilege will hold. */
  rules: Json<StoredPermissionRule[]>;
  is_temporary: boolean;
  temporary_range: string | null;
  /** user | identity */
  requester_type: string;
  requested_by_user_id: string | null;
  requested_by_identity_id: string | null;
  /** pending | approved | rejected | revoked (expired is worked out when read) */
  status: Generated<string>;
  /** A pending request past this is expired. */
  expires_at: Date | string | null;
  approved_at: Date | string | null;
  revoked_at: Date | string | null;
  revoked_by_user_id: string | null;
  revoked_by_identity_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AccessApprovalReviewsTable {
  id: Generated<string>;
  request_id: string;
  /** user | identity */
  reviewer_type: string;
  reviewer_user_id: string | null;
  reviewer_identity_id: string | null;
  /** approved | rejected */
  status: string;
  bypass_reason: string | null;
  created_at: CreatedAt;
}

export interface AccessApprovalTables {
  access_approval_policies: AccessApprovalPoliciesTable;
  access_approval_policy_environments: AccessApprovalPolicyEnvironmentsTable;
  access_approval_requests: AccessApprovalRequestsTable;
  access_approval_reviews: AccessApprovalReviewsTable;
}
