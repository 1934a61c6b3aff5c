import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

/** One root-key version: its material sealed by the seal, erased (null) once retired. */
export interface RootKeysTable {
  version: number;
  sealed: string | null;
  sealed_by: "SOFTWARE" | "HSM";
  seal_fingerprint: string;
  state: "active" | "retiring" | "retired";
  created_at: CreatedAt;
  retired_at: Timestamp | null;
}

/** An online rotation: re-wraps everything under older versions to `to_version`, then retires them. */
export interface RootKeyRotationsTable {
  id: Generated<string>;
  from_version: number;
  to_version: number;
  status: "running" | "completed" | "failed";
  total: number;
  rewrapped: Generated<number>;
  /** Per table of the registry, the last key re-wrapped (keyset pagination). */
  cursor: Generated<Json<Record<string, string>>>;
  error: string | null;
  org_id: string | null;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  started_at: CreatedAt;
  completed_at: Timestamp | null;
}

/** A value of the instance itself sealed under the root key (the derivation secret). */
export interface InstanceSecretsTable {
  name: string;
  sealed: string;
  created_at: CreatedAt;
}

export interface RootKeyTables {
  root_keys: RootKeysTable;
  root_key_rotations: RootKeyRotationsTable;
  instance_secrets: InstanceSecretsTable;
}
