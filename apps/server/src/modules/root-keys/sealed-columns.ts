/**
 * Every column sealed straight under the root key, with the associated data each value was sealed
 * with (built from its row). A root-key rotation walks this list; migration 0042 guards the same
 * columns against writes under a retired version, and `test/root-keys/registry.test.ts` fails when a
 * table gains a sealed column that is not listed here. Values sealed under a data key (secrets,
 * KMS key material, rotation credentials) are not here: a root rotation never needs to open them.
 */
export type SealedTable = {
  table: string;
  /** The key the re-wrap pages by (unique). */
  key: string;
  /** The key column's type, when not uuid. */
  keyType?: "text";
  /** Other columns the associated data is built from. */
  extra?: readonly string[];
  columns: readonly { name: string; context: (row: Record<string, string>) => string }[];
};

const byKey =
  (prefix: string, suffix = "") =>
  (key: string) =>
  (row: Record<string, string>) =>
    `${prefix}${row[key]}${suffix}`;

const ofId = (prefix: string, suffix = "") => byKey(prefix, suffix)("id");
const ofConfig = (field: string) => byKey(`${field}:`)("auth_config_id");

export const SEALED_TABLES: readonly SealedTable[] = [
  {
    table: "project_data_keys",
    key: "id",
    extra: ["project_id"],
    columns: [{ name: "wrapped_key", context: byKey("project-data-key:")("project_id") }],
  },
  {
    table: "app_connections",
    key: "id",
    columns: [{ name: "encrypted_credentials", context: ofId("app_connections:", ":credentials") }],
  },
  {
    table: "audit_log_streams",
    key: "id",
    columns: [
      { name: "encrypted_headers", context: ofId("audit-stream:", ":headers") },
      { name: "encrypted_signing_secret", context: ofId("audit-stream:", ":secret") },
    ],
  },
  { table: "dynamic_secrets", key: "id", columns: [{ name: "encrypted_inputs", context: ofId("dynamic-secret:") }] },
  {
    table: "identity_jwt_auths",
    key: "auth_config_id",
    columns: [
      { name: "encrypted_jwks_ca_cert", context: ofConfig("jwt-jwks-ca-cert") },
      { name: "encrypted_public_keys", context: ofConfig("jwt-public-keys") },
    ],
  },
  {
    table: "identity_kubernetes_auths",
    key: "auth_config_id",
    columns: [
      { name: "encrypted_ca_cert", context: ofConfig("k8s-ca-cert") },
      { name: "encrypted_token_reviewer_jwt", context: ofConfig("k8s-reviewer-jwt") },
    ],
  },
  {
    table: "identity_ldap_auths",
    key: "auth_config_id",
    columns: [
      { name: "encrypted_bind_dn", context: ofConfig("ldap-bind-dn") },
      { name: "encrypted_bind_pass", context: ofConfig("ldap-bind-pass") },
      { name: "encrypted_ca_cert", context: ofConfig("ldap-ca-cert") },
    ],
  },
  {
    table: "identity_oidc_auths",
    key: "auth_config_id",
    columns: [{ name: "encrypted_ca_cert", context: ofConfig("oidc-ca-cert") }],
  },
  {
    table: "oidc_configs",
    key: "id",
    columns: [{ name: "encrypted_client_secret", context: ofId("oidc-config:") }],
  },
  {
    table: "pki_certificate_authorities",
    key: "id",
    columns: [{ name: "encrypted_private_key", context: ofId("pki-ca:") }],
  },
  {
    table: "pki_certificates",
    key: "id",
    columns: [{ name: "encrypted_private_key", context: ofId("pki-certificate:") }],
  },
  {
    table: "pki_enrollment_configs",
    key: "id",
    columns: [{ name: "encrypted_secret", context: ofId("pki-enrollment:") }],
  },
  { table: "pki_scep_ras", key: "id", columns: [{ name: "encrypted_private_key", context: ofId("pki-scep-ra:") }] },
  { table: "ssh_cas", key: "id", columns: [{ name: "encrypted_private_key", context: ofId("ssh-ca:") }] },
  {
    table: "sso_login_states",
    key: "id",
    columns: [{ name: "encrypted_code_verifier", context: ofId("sso-login-state:") }],
  },
  {
    table: "instance_secrets",
    key: "name",
    keyType: "text",
    columns: [{ name: "sealed", context: byKey("instance-secret:")("name") }],
  },
];
