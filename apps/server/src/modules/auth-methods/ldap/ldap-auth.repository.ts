import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_ldap_auths";
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
  insertMethodRow(db, TABLE, { auth_config_id: configId, ...toRow(values) }, COLUMNS);

export const findLdapAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export const findLdapAuthWithSecrets = (db: Database, configId: string) =>
  findMethodRow(db, TABLE, [...COLUMNS, ...SECRET_COLUMNS], configId);

export type LdapAuthRow = Awaited<ReturnType<typeof findLdapAuth>>;
export type LdapAuthSecretRow = Awaited<ReturnType<typeof findLdapAuthWithSecrets>>;

export const updateLdapAuth = (db: Database, configId: string, values: Partial<LdapAuthValues>) =>
  updateMethodRow(db, TABLE, configId, toRow(values), COLUMNS);

/** What a login needs: the identity's LDAP config with its common settings, found by identity id. */
export const findLdapLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_ldap_auths as l", "l.auth_config_id", "c.id")
    .select([
      ...LOGIN_CONFIG_COLUMNS,
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
