import type { Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./foundation";

export type GatewayAuthMethod = "token" | "aws" | "identity";

export interface GatewaysTable {
  id: Generated<string>;
  org_id: string;
  name: string;
  auth_method: GatewayAuthMethod;
  /** Set exactly when auth_method is "identity". */
  identity_id: string | null;
  relay_id: string | null;
  direct_address: string | null;
  /** Bumped by every login and revocation; only access tokens of the current version authenticate. */
  token_version: Generated<number>;
  heartbeat: Date | string | null;
  heartbeat_ttl: number | null;
  direct_heartbeat: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface GatewayAwsAuthConfigsTable {
  id: Generated<string>;
  gateway_id: string;
  sts_endpoint: string;
  allowed_principal_arns: string;
  allowed_account_ids: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface GatewayEnrollmentTokensTable {
  id: Generated<string>;
  gateway_id: string;
  token_hash: Buffer;
  expires_at: Date | string;
  used_at: Date | string | null;
  created_at: CreatedAt;
}

export interface GatewayAccessTokensTable {
  id: Generated<string>;
  gateway_id: string;
  token_hash: Buffer;
  token_version: number;
  created_at: CreatedAt;
}

export interface GatewayTables {
  gateways: GatewaysTable;
  gateway_aws_auth_configs: GatewayAwsAuthConfigsTable;
  gateway_enrollment_tokens: GatewayEnrollmentTokensTable;
  gateway_access_tokens: GatewayAccessTokensTable;
}
