import { sql } from "kysely";
import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

export const universalAuthRows = methodTable("identity_universal_auths", [
  "auth_config_id",
  "client_id",
  "client_secret_trusted_ips",
  "lockout_enabled",
  "lockout_threshold",
  "lockout_duration_seconds",
  "lockout_counter_reset_seconds",
] as const);

/** The login lookup: config and common settings by client id. */
export const findUniversalAuthLoginConfig = (db: Database, clientId: string) =>
  db
    .selectFrom("identity_universal_auths as u")
    .innerJoin("identity_auth_configs as c", "c.id", "u.auth_config_id")
    .select([
      ...LOGIN_CONFIG_COLUMNS,
      "u.client_secret_trusted_ips",
      "u.lockout_enabled",
      "u.lockout_threshold",
      "u.lockout_duration_seconds",
      "u.lockout_counter_reset_seconds",
    ])
    .where("u.client_id", "=", clientId)
    .executeTakeFirst();

const SECRET_COLUMNS = [
  "id",
  "auth_config_id",
  "description",
  "client_secret_prefix",
  "client_secret_num_uses",
  "client_secret_num_uses_limit",
  "client_secret_ttl",
  "is_client_secret_revoked",
  "created_at",
  "updated_at",
] as const;

export const insertClientSecret = (
  db: Database,
  values: {
    auth_config_id: string;
    description: string;
    client_secret_prefix: string;
    client_secret_hash: Buffer;
    client_secret_num_uses_limit: number;
    client_secret_ttl: number;
  },
) => db.insertInto("identity_ua_client_secrets").values(values).returning(SECRET_COLUMNS).executeTakeFirstOrThrow();

export type ClientSecretRow = Awaited<ReturnType<typeof insertClientSecret>>;

export const listActiveClientSecrets = (db: Database, configId: string) =>
  db
    .selectFrom("identity_ua_client_secrets")
    .select(SECRET_COLUMNS)
    .where("auth_config_id", "=", configId)
    .where("is_client_secret_revoked", "=", false)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .limit(1_000)
    .execute();

export const findClientSecret = (db: Database, configId: string, secretId: string) =>
  db
    .selectFrom("identity_ua_client_secrets")
    .select(SECRET_COLUMNS)
    .where("auth_config_id", "=", configId)
    .where("id", "=", secretId)
    .executeTakeFirst();

export const findActiveClientSecretByHash = (db: Database, configId: string, hash: Buffer) =>
  db
    .selectFrom("identity_ua_client_secrets")
    .select(SECRET_COLUMNS)
    .where("auth_config_id", "=", configId)
    .where("client_secret_hash", "=", hash)
    .where("is_client_secret_revoked", "=", false)
    .executeTakeFirst();

/** Undefined when the secret is gone (its auth method was removed meanwhile). */
export const revokeClientSecretRow = (db: Database, secretId: string) =>
  db
    .updateTable("identity_ua_client_secrets")
    .set({ is_client_secret_revoked: true, updated_at: new Date() })
    .where("id", "=", secretId)
    .returning(SECRET_COLUMNS)
    .executeTakeFirst();

/** Spend one use atomically: N parallel logins never overspend a limit (0 = unlimited). */
export const spendClientSecretUse = (db: Database, secretId: string) =>
  db
    .updateTable("identity_ua_client_secrets")
    .set({ client_secret_num_uses: sql`client_secret_num_uses + 1`, updated_at: new Date() })
    .where("id", "=", secretId)
    .where("is_client_secret_revoked", "=", false)
    .where(sql<boolean>`(client_secret_num_uses_limit = 0 or client_secret_num_uses < client_secret_num_uses_limit)`)
    .returning("id")
    .executeTakeFirst();
