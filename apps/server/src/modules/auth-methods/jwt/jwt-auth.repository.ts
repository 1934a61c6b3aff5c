import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_jwt_auths";
const COLUMNS = [
  "auth_config_id",
  "configuration_type",
  "jwks_url",
  "bound_issuer",
  "bound_audiences",
  "bound_claims",
  "bound_subject",
] as const;
const ALL_COLUMNS = [...COLUMNS, "encrypted_jwks_ca_cert", "encrypted_public_keys"] as const;

export type JwtAuthValues = {
  configuration_type: string;
  jwks_url: string;
  bound_issuer: string;
  bound_audiences: string;
  bound_claims: Record<string, string>;
  bound_subject: string;
  encrypted_jwks_ca_cert: string | null;
  encrypted_public_keys: string | null;
};

export const insertJwtAuth = (db: Database, configId: string, values: JwtAuthValues) =>
  insertMethodRow(
    db,
    TABLE,
    { auth_config_id: configId, ...values, bound_claims: JSON.stringify(values.bound_claims) },
    ALL_COLUMNS,
  );

export const findJwtAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export const findJwtAuthWithSecrets = (db: Database, configId: string) =>
  findMethodRow(db, TABLE, ALL_COLUMNS, configId);

export type JwtAuthRow = Awaited<ReturnType<typeof findJwtAuth>>;
export type JwtAuthSecretRow = Awaited<ReturnType<typeof findJwtAuthWithSecrets>>;

export const updateJwtAuth = (db: Database, configId: string, values: Partial<JwtAuthValues>) =>
  updateMethodRow(
    db,
    TABLE,
    configId,
    { ...values, bound_claims: values.bound_claims ? JSON.stringify(values.bound_claims) : undefined },
    ALL_COLUMNS,
  );

export const findJwtLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_jwt_auths as j", "j.auth_config_id", "c.id")
    .select([
      ...LOGIN_CONFIG_COLUMNS,
      "j.configuration_type",
      "j.jwks_url",
      "j.encrypted_jwks_ca_cert",
      "j.encrypted_public_keys",
      "j.bound_issuer",
      "j.bound_audiences",
      "j.bound_claims",
      "j.bound_subject",
    ])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "jwt-auth")
    .executeTakeFirst();
