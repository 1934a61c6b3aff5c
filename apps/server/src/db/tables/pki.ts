import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./foundation";

type TimestampValue = ColumnType<Date, Date | string, Date | string>;

export interface PkiCertificateAuthoritiesTable {
  /** Chosen before insert, so the private key's ciphertext can be bound to it. */
  id: Generated<string>;
  project_id: string;
  parent_ca_id: string | null;
  name: string;
  type: "root" | "intermediate";
  status: "active" | "disabled";
  friendly_name: string | null;
  common_name: string;
  organization: string;
  ou: string;
  country: string;
  province: string;
  locality: string;
  dn: string;
  key_algorithm: string;
  max_path_length: number;
  serial_number: string;
  not_before: TimestampValue;
  not_after: TimestampValue;
  certificate_pem: string;
  /** The certificates above this CA, nearest first; empty for a root. */
  certificate_chain_pem: string;
  /** PKCS#8 PEM under the root key, bound to the CA id. */
  encrypted_private_key: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PkiCertificateProfilesTable {
  id: Generated<string>;
  project_id: string;
  ca_id: string | null;
  slug: string;
  description: string | null;
  enrollment_type: "api" | "est" | "acme" | "scep";
  issuer_type: "ca" | "self-signed";
  defaults: Json<Record<string, unknown> | null> | null;
  external_configs: Json<Record<string, unknown> | null> | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One row per profile and enrollment type; the EST passphrase or SCEP challenge sits encrypted beside the settings. */
export interface PkiEnrollmentConfigsTable {
  id: Generated<string>;
  profile_id: string;
  type: "api" | "est" | "acme" | "scep";
  settings: Json<Record<string, unknown>>;
  encrypted_secret: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PkiCertificatesTable {
  id: Generated<string>;
  project_id: string;
  ca_id: string | null;
  profile_id: string | null;
  status: ColumnType<"active" | "revoked", "active" | "revoked" | undefined, "active" | "revoked">;
  serial_number: string;
  common_name: string;
  alt_names: string;
  friendly_name: string;
  key_algorithm: string;
  signature_algorithm: string;
  key_usages: Json<string[]>;
  extended_key_usages: Json<string[]>;
  not_before: TimestampValue;
  not_after: TimestampValue;
  revoked_at: TimestampValue | null;
  revocation_reason: string | null;
  certificate_pem: string;
  issuing_ca_certificate_pem: string;
  certificate_chain_pem: string;
  /** Only when the profile keeps generated keys. */
  encrypted_private_key: string | null;
  /** The certificate this one renewed, and the one that renewed it. */
  renewed_from_id: string | null;
  renewed_by_id: string | null;
  /** Automatic renewal: null until tried, then "renewed" or "failed" with the error and the next try. */
  renewal_status: "renewed" | "failed" | null;
  renewal_error: string | null;
  renewal_attempts: Generated<number>;
  renewal_next_attempt_at: TimestampValue | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Every certificate a CA has had: renewal adds one, the old ones stay for verification and CRLs. */
export interface PkiCaCertificatesTable {
  id: Generated<string>;
  /** Null once the CA is deleted: the revoked row stays, owned by its issuer, so the parent's CRL keeps listing it. */
  ca_id: string | null;
  /** The CA that signed it; null for a root. */
  issuer_ca_id: string | null;
  serial_number: string;
  certificate_pem: string;
  certificate_chain_pem: string;
  not_before: TimestampValue;
  not_after: TimestampValue;
  revoked_at: TimestampValue | null;
  revocation_reason: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PkiAcmeNoncesTable {
  nonce: string;
  expires_at: TimestampValue;
}

export interface PkiAcmeAccountsTable {
  id: Generated<string>;
  profile_id: string;
  /** RFC 7638 thumbprint of the account key: one account per key and profile. */
  thumbprint: string;
  jwk: Json<Record<string, unknown>>;
  status: ColumnType<"valid" | "deactivated", "valid" | "deactivated" | undefined, "valid" | "deactivated">;
  contact: Json<string[]>;
  eab_kid: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type AcmeStatus = "pending" | "ready" | "processing" | "valid" | "invalid" | "expired" | "deactivated";

export interface PkiAcmeOrdersTable {
  id: Generated<string>;
  account_id: string;
  status: AcmeStatus;
  identifiers: Json<{ type: string; value: string }[]>;
  expires_at: TimestampValue;
  error: Json<Record<string, unknown> | null> | null;
  certificate_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PkiAcmeAuthorizationsTable {
  id: Generated<string>;
  order_id: string;
  identifier_type: string;
  identifier_value: string;
  wildcard: Generated<boolean>;
  status: AcmeStatus;
  expires_at: TimestampValue;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PkiAcmeChallengesTable {
  id: Generated<string>;
  authorization_id: string;
  type: "http-01" | "dns-01";
  token: string;
  status: AcmeStatus;
  validated_at: TimestampValue | null;
  error: Json<Record<string, unknown> | null> | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PkiTables {
  pki_certificate_authorities: PkiCertificateAuthoritiesTable;
  pki_certificate_profiles: PkiCertificateProfilesTable;
  pki_enrollment_configs: PkiEnrollmentConfigsTable;
  pki_certificates: PkiCertificatesTable;
  pki_ca_certificates: PkiCaCertificatesTable;
  pki_acme_nonces: PkiAcmeNoncesTable;
  pki_acme_accounts: PkiAcmeAccountsTable;
  pki_acme_orders: PkiAcmeOrdersTable;
  pki_acme_authorizations: PkiAcmeAuthorizationsTable;
  pki_acme_challenges: PkiAcmeChallengesTable;
}
