import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

/** Ciphertexts are selected only by callers that decrypt them for the response. */
export const kubernetesAuthRows = methodTable(
  "identity_kubernetes_auths",
  [
    "auth_config_id",
    "kubernetes_host",
    "token_review_mode",
    "allowed_namespaces",
    "allowed_names",
    "allowed_audience",
    "gateway_id",
    "gateway_pool_id",
    "template_id",
    "verify_tls_certificate",
  ] as const,
  ["encrypted_ca_cert", "encrypted_token_reviewer_jwt"] as const,
);

export const findKubernetesLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_kubernetes_auths as k", "k.auth_config_id", "c.id")
    .select([
      ...LOGIN_CONFIG_COLUMNS,
      "k.kubernetes_host",
      "k.token_review_mode",
      "k.allowed_namespaces",
      "k.allowed_names",
      "k.allowed_audience",
      "k.verify_tls_certificate",
      "k.encrypted_ca_cert",
      "k.encrypted_token_reviewer_jwt",
    ])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "kubernetes-auth")
    .executeTakeFirst();
