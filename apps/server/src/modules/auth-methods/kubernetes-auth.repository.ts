import type { Database } from "../../db/database";
import { definedOnly } from "./method-inputs";

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

export const insertKubernetesAuth = (db: Database, configId: string, values: KubernetesAuthValues) =>
  db
    .insertInto("identity_kubernetes_auths")
    .values({ auth_config_id: configId, ...values })
    .returning([...COLUMNS, ...SECRET_COLUMNS])
    .executeTakeFirstOrThrow();

export const findKubernetesAuth = (db: Database, configId: string) =>
  db.selectFrom("identity_kubernetes_auths").select(COLUMNS).where("auth_config_id", "=", configId).executeTakeFirstOrThrow();

export const findKubernetesAuthWithSecrets = (db: Database, configId: string) =>
  db
    .selectFrom("identity_kubernetes_auths")
    .select([...COLUMNS, ...SECRET_COLUMNS])
    .where("auth_config_id", "=", configId)
    .executeTakeFirstOrThrow();

export type KubernetesAuthRow = Awaited<ReturnType<typeof findKubernetesAuth>>;
export type KubernetesAuthSecretRow = Awaited<ReturnType<typeof findKubernetesAuthWithSecrets>>;

export const updateKubernetesAuth = (db: Database, configId: string, values: Partial<KubernetesAuthValues>) => {
  const set = definedOnly(values);
  if (Object.keys(set).length === 0) return findKubernetesAuthWithSecrets(db, configId);
  return db
    .updateTable("identity_kubernetes_auths")
    .set(set)
    .where("auth_config_id", "=", configId)
    .returning([...COLUMNS, ...SECRET_COLUMNS])
    .executeTakeFirstOrThrow();
};
