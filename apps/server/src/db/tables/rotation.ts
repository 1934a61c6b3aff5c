import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./foundation";

export interface AppConnectionsTable {
  id: Generated<string>;
  org_id: string;
  project_id: string | null;
  /** postgres | mysql | ldap | redis */
  app: string;
  name: string;
  description: string | null;
  method: string;
  /** The credentials as sealed JSON; never returned. */
  encrypted_credentials: string;
  credentials_hash: string;
  is_platform_managed_credentials: Generated<boolean>;
  gateway_id: string | null;
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type RotateAtUtc = { hours: number; minutes: number };

export interface SecretRotationsTable {
  id: Generated<string>;
  project_id: string;
  folder_id: string;
  connection_id: string;
  /** postgres-credentials | mysql-credentials | ldap-password | redis-credentials */
  type: string;
  name: string;
  description: string | null;
  parameters: ColumnType<Record<string, unknown>, string, string>;
  secrets_mapping: ColumnType<Record<string, string>, string, string>;
  is_auto_rotation_enabled: Generated<boolean>;
  rotation_interval: number;
  rotate_at_utc: ColumnType<RotateAtUtc, string | undefined, string>;
  active_index: Generated<number>;
  /** Both credentials `[{username, password}, …]`, sealed. */
  encrypted_credentials: string;
  /** The rotation in progress `{slot, password}`, sealed; null when none. */
  encrypted_intent: string | null;
  rotation_status: Generated<string>;
  last_rotation_message: string | null;
  last_rotated_at: Date | string | null;
  last_rotation_attempted_at: Date | string | null;
  next_rotation_at: Date | string | null;
  is_last_rotation_manual: Generated<boolean>;
  attempts: Generated<number>;
  /** Until when the instance running it holds the rotation; null when nobody does. */
  claimed_until: Date | string | null;
  claim_token: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface RotationTables {
  app_connections: AppConnectionsTable;
  secret_rotations: SecretRotationsTable;
}
