import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_oidc_auths";
const COLUMNS = [
  "auth_config_id",
  "oidc_discovery_url",
  "bound_issuer",
  "bound_audiences",
  "bound_claims",
  "claim_metadata_mapping",
  "bound_subject",
] as const;
const SECRET_COLUMNS = ["encrypted_ca_cert"] as const;
const ALL_COLUMNS = [...COLUMNS, ...SECRET_COLUMNS] as const;

export type OidcAuthValues = {
  oidc_discovery_url: string;
  bound_issuer: string;
  bound_audiences: string;
  bound_claims: Record<string, string>;
  claim_metadata_mapping: Record<string, string> | null;
  bound_subject: string;
  encrypted_ca_cert: string | null;
};

const toRow = (values: Partial<OidcAuthValues>) => ({
  ...values,
  bound_claims: values.bound_claims ? JSON.stringify(values.bound_claims) : undefined,
  claim_metadata_mapping:
    values.claim_metadata_mapping === undefined
      ? undefined
      : values.claim_metadata_mapping && JSON.stringify(values.claim_metadata_mapping),
});

export const insertOidcAuth = (db: Database, configId: string, values: OidcAuthValues) =>
  insertMethodRow(
    db,
    TABLE,
    {
      auth_config_id: configId,
      ...values,
      bound_claims: JSON.stringify(values.bound_claims),
      claim_metadata_mapping: values.claim_metadata_mapping && JSON.stringify(values.claim_metadata_mapping),
    },
    ALL_COLUMNS,
  );

export const findOidcAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export const findOidcAuthWithSecrets = (db: Database, configId: string) =>
  findMethodRow(db, TABLE, ALL_COLUMNS, configId);

export type OidcAuthRow = Awaited<ReturnType<typeof findOidcAuth>>;
export type OidcAuthSecretRow = Awaited<ReturnType<typeof findOidcAuthWithSecrets>>;

export const updateOidcAuth = (db: Database, configId: string, values: Partial<OidcAuthValues>) =>
  updateMethodRow(db, TABLE, configId, toRow(values), ALL_COLUMNS);

export const findOidcLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_oidc_auths as o", "o.auth_config_id", "c.id")
    .select([
      ...LOGIN_CONFIG_COLUMNS,
      "o.oidc_discovery_url",
      "o.bound_issuer",
      "o.bound_audiences",
      "o.bound_claims",
      "o.claim_metadata_mapping",
      "o.bound_subject",
      "o.encrypted_ca_cert",
    ])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "oidc-auth")
    .executeTakeFirst();

/** Claims mapped at login, kept beside the token for permission templates (identity.auth.oidc.claims.*). */
export const insertTokenClaims = (db: Database, tokenId: string, authMethod: string, claims: Record<string, string>) =>
  db
    .insertInto("identity_access_token_claims")
    .values({ token_id: tokenId, auth_method: authMethod, claims: JSON.stringify(claims) })
    .execute();

export const findTokenClaims = (db: Database, tokenId: string) =>
  db
    .selectFrom("identity_access_token_claims")
    .select(["auth_method", "claims"])
    .where("token_id", "=", tokenId)
    .executeTakeFirst();
