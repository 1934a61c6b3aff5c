import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./foundation";

type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export interface SecretApprovalPoliciesTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  /** A folder path or a glob of folder paths. */
  secret_path: string;
  approvals: number;
  /** hard | soft */
  enforcement_level: string;
  allowed_self_approvals: boolean;
  bypass_for_machine_identities: boolean;
  deleted_at: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SecretApprovalPolicyEnvironmentsTable {
  policy_id: string;
  env_id: string;
}

/**
 * Approvers and bypassers of both kinds of approval policy: a row belongs to a change policy or to an
 * access policy, and names a person, an identity or a group.
 */
export interface ApprovalPolicyPrincipalsTable {
  id: Generated<string>;
  secret_policy_id: string | null;
  access_policy_id: string | null;
  /** approver | bypasser */
  role: string;
  /** user | identity | group */
  principal_type: string;
  user_id: string | null;
  identity_id: string | null;
  group_id: string | null;
  /** The order they were given in, per policy and role. */
  position: Generated<number>;
  created_at: CreatedAt;
}

export type ChangeConflict = { secretKey: string; op: string; reason: string };

export interface SecretApprovalRequestsTable {
  id: Generated<string>;
  slug: string;
  project_id: string;
  policy_id: string;
  folder_id: string;
  environment: string;
  secret_path: string;
  /** open | close */
  status: Generated<string>;
  has_merged: Generated<boolean>;
  conflicts: ColumnType<ChangeConflict[], string | undefined, string>;
  committer_type: string;
  committer_id: string;
  status_changed_by_type: string | null;
  status_changed_by_id: string | null;
  bypass_reason: string | null;
  merged_at: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SecretApprovalRequestCommitsTable {
  id: Generated<string>;
  request_id: string;
  position: number;
  /** create | update | delete */
  op: string;
  secret_key: string;
  new_secret_key: string | null;
  secret_id: string | null;
  secret_version: number | null;
  /** Sealed under the project's data key, bound to this row. */
  encrypted_value: string | null;
  encrypted_comment: string | null;
  tag_ids: NullableJson<string[]>;
  metadata: NullableJson<{ key: string; value: string; isEncrypted: boolean }[]>;
  skip_multiline_encoding: boolean | null;
}

export interface SecretApprovalReviewsTable {
  id: Generated<string>;
  request_id: string;
  reviewer_type: string;
  reviewer_id: string;
  /** approved | rejected */
  status: string;
  comment: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ApprovalTables {
  secret_approval_policies: SecretApprovalPoliciesTable;
  secret_approval_policy_environments: SecretApprovalPolicyEnvironmentsTable;
  approval_policy_principals: ApprovalPolicyPrincipalsTable;
  secret_approval_requests: SecretApprovalRequestsTable;
  secret_approval_request_commits: SecretApprovalRequestCommitsTable;
  secret_approval_reviews: SecretApprovalReviewsTable;
}
