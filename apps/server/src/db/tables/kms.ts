import type { Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./foundation";

export interface KmsKeysTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  description: Generated<string>;
  key_usage: string;
  encryption_algorithm: string;
  is_disabled: Generated<boolean>;
  /** The version new ciphertexts and signatures use. */
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface KmsKeyVersionsTable {
  /** Chosen by the writer: the sealed material's associated data names the row. */
  id: string;
  key_id: string;
  version: number;
  /** The key material sealed under the project's data key. */
  encrypted_material: string;
  /** Asymmetric keys only: DER SubjectPublicKeyInfo, base64 (public, so stored in clear). */
  public_key: string | null;
  created_at: CreatedAt;
}

export interface KmsTables {
  kms_keys: KmsKeysTable;
  kms_key_versions: KmsKeyVersionsTable;
}
