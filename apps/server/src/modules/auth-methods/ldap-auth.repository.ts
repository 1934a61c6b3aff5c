import type { Database } from "../../db/database";
import { definedOnly } from "./method-inputs";

const COLUMNS = [
  "auth_config_id",
  "url",
  "search_base",
  "search_filter",
  "allowed_fields",
  "template_id",
  "lockout_enabled",
  "lockout_threshold",
  "lockout_duration_seconds",
  "lockout_counter_reset_seconds",
] as const;
/** Ciphertexts leave only for the GET response and for logins, which decrypt them. */
const SECRET_COLUMNS = ["encrypted_bind_dn", "encrypted_bind_pass", "encrypted_ca_cert"] as const;

export type LdapAuthValues = {
  url: string;
  search_base: string;
  search_filter: string;
  allowed_fields: { key: string; value: string }[] | null;
  encrypted_bind_dn: string;
  encrypted_bind_pass: string;
  encrypted_ca_cert: string | null;
  lockout_enabled: boolean;
  lockout_threshold: number;
  lockout_duration_seconds: number;
  lockout_counter_reset_seconds: number;
};

const toRow = <T extends { allowed_fields?: { key: string; value: string }[] | null }>(values: T) => ({
  ...values,
  allowed_fields: values.allowed_fields ? JSON.stringify(values.allowed_fields) : values.allowed_fields,
});

export const insertLdapAuth = (db: Database, configId: string, values: LdapAuthValues) =>
  db
    .insertInto("identity_ldap_auths")
    .values({ auth_config_id: configId, ...toRow(values) })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();

export const findLdapAuth = (db: Database, configId: string) =>
  db.selectFrom("identity_ldap_auths").select(COLUMNS).where("auth_config_id", "=", configId).executeTakeFirstOrThrow();

export const findLdapAuthWithSecrets = (db: Database, configId: string) =>
  db
    .selectFrom("identity_ldap_auths")
    .select([...COLUMNS, ...SECRET_COLUMNS])
    .where("auth_config_id", "=", configId)
    .executeTakeFirstOrThrow();

export type LdapAuthRow = Awaited<ReturnType<typeof findLdapAuth>>;
export type LdapAuthSecretRow = Awaited<ReturnType<typeof findLdapAuthWithSecrets>>;

export const updateLdapAuth = (db: Database, configId: string, values: Partial<LdapAuthValues>) => {
  const set = definedOnly(toRow(values));
  if (Object.keys(set).length === 0) return findLdapAuth(db, configId);
  return db.updateTable("identity_ldap_auths").set(set).where("auth_config_id", "=", configId).returning(COLUMNS).executeTakeFirstOrThrow();
};

/** What a login needs: the identity's LDAP config with its common settings, found by identity id. */
export const findLdapLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_ldap_auths as l", "l.auth_config_id", "c.id")
    .select([
      "c.id",
      "c.identity_id",
      "c.method",
      "c.access_token_ttl",
      "c.access_token_max_ttl",
      "c.access_token_num_uses_limit",
      "c.access_token_period",
      "l.url",
      "l.search_base",
      "l.search_filter",
      "l.allowed_fields",
      "l.encrypted_bind_dn",
      "l.encrypted_bind_pass",
      "l.encrypted_ca_cert",
      "l.lockout_enabled",
      "l.lockout_threshold",
      "l.lockout_duration_seconds",
      "l.lockout_counter_reset_seconds",
    ])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "ldap-auth")
    .executeTakeFirst();
