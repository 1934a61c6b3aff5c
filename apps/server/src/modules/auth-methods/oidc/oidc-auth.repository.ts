import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

export const oidcAuthRows = methodTable(
  "identity_oidc_auths",
  [
    "auth_config_id",
    "oidc_discovery_url",
    "bound_issuer",
    "bound_audiences",
    "bound_claims",
    "claim_metadata_mapping",
    "bound_subject",
  ] as const,
  ["encrypted_ca_cert"] as const,
);

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
