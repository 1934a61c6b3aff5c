import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

export type DynamicSecretMetadataEntry = { key: string; value: string };

export interface DynamicSecretsTable {
  id: Generated<string>;
  /** Null once the folder is gone: the secret is detached and only kept until its leases are revoked. */
  folder_id: string | null;
  name: string;
  type: string;
  /** Every credential of this secret is named `<entity_prefix>_<lease id hex>`, so the sweeper can find strays. */
  entity_prefix: string;
  encrypted_inputs: string;
  default_ttl: string;
  max_ttl: string | null;
  username_template: string | null;
  metadata: Json<DynamicSecretMetadataEntry[]>;
  status: string | null;
  status_details: string | null;
  /** Revocations that failed in a row on this secret's target; reset by the next success. */
  revocation_failures: Generated<number>;
  /** No revocation of this secret is tried before then (backoff after a failure). */
  revocation_paused_until: Date | null;
  /** When an instance last claimed this secret's orphan sweep (one instance sweeps a target per period). */
  orphans_swept_at: Date | null;
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** `creating`: intent committed, credential maybe not yet made; `active`: handed out; `revoking`: being taken back. */
export type LeaseState = "creating" | "active" | "revoking";

export interface DynamicSecretLeasesTable {
  id: string;
  dynamic_secret_id: string;
  external_entity_id: string;
  expire_at: Timestamp;
  version: Generated<number>;
  state: LeaseState;
  status: string | null;
  status_details: string | null;
  config: Json<unknown> | null;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  claimed_until: Timestamp | null;
  claim_token: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface DynamicSecretTables {
  dynamic_secrets: DynamicSecretsTable;
  dynamic_secret_leases: DynamicSecretLeasesTable;
}
