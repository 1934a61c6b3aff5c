import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_kubernetes_auths";
const COLUMNS = [
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
] as const;
/** Ciphertexts are selected only by callers that decrypt them for the response. */
const SECRET_COLUMNS = ["encrypted_ca_cert", "encrypted_token_reviewer_jwt"] as const;

export type KubernetesAuthValues = {
  kubernetes_host: string | null;
  token_review_mode: string;
  allowed_namespaces: string;
  allowed_names: string;
  allowed_audience: string;
  gateway_id: string | null;
  gateway_pool_id: string | null;
  verify_tls_certificate: boolean;
  encrypted_ca_cert: string | null;
  encrypted_token_reviewer_jwt: string | null;
};

const ALL_COLUMNS = [...COLUMNS, ...SECRET_COLUMNS] as const;

export const insertKubernetesAuth = (db: Database, configId: string, values: KubernetesAuthValues) =>
  insertMethodRow(db, TABLE, { auth_config_id: configId, ...values }, ALL_COLUMNS);

export const findKubernetesAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export const findKubernetesAuthWithSecrets = (db: Database, configId: string) =>
  findMethodRow(db, TABLE, ALL_COLUMNS, configId);

export type KubernetesAuthRow = Awaited<ReturnType<typeof findKubernetesAuth>>;
export type KubernetesAuthSecretRow = Awaited<ReturnType<typeof findKubernetesAuthWithSecrets>>;

export const updateKubernetesAuth = (db: Database, configId: string, values: Partial<KubernetesAuthValues>) =>
  updateMethodRow(db, TABLE, configId, values, ALL_COLUMNS);

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
