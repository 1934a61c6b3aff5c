import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

/** Ciphertexts leave only for the GET response and for logins, which decrypt them. */
export const ldapAuthRows = methodTable(
  "identity_ldap_auths",
  [
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
  ] as const,
  ["encrypted_bind_dn", "encrypted_bind_pass", "encrypted_ca_cert"] as const,
);

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
