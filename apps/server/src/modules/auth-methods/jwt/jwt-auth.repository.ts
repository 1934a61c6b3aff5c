import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

export const jwtAuthRows = methodTable(
  "identity_jwt_auths",
  [
    "auth_config_id",
    "configuration_type",
    "jwks_url",
    "bound_issuer",
    "bound_audiences",
    "bound_claims",
    "bound_subject",
  ] as const,
  ["encrypted_jwks_ca_cert", "encrypted_public_keys"] as const,
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
