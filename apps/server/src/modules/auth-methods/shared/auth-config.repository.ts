import type { Tx } from "../../../db/transaction";
import type { TrustedIp } from "@keyward/contract";
import type { Database } from "../../../db/database";

export const AUTH_CONFIG_COLUMNS = [
  "id",
  "identity_id",
  "method",
  "access_token_ttl",
  "access_token_max_ttl",
  "access_token_num_uses_limit",
  "access_token_trusted_ips",
  "access_token_period",
  "created_at",
  "updated_at",
] as const;

export const findAuthConfig = (db: Database, identityId: string, method: string) =>
  db
    .selectFrom("identity_auth_configs")
    .select(AUTH_CONFIG_COLUMNS)
    .where("identity_id", "=", identityId)
    .where("method", "=", method)
    .executeTakeFirst();

export type AuthConfigRow = NonNullable<Awaited<ReturnType<typeof findAuthConfig>>>;

export type AuthConfigValues = {
  access_token_ttl: number;
  access_token_max_ttl: number;
  access_token_num_uses_limit: number;
  access_token_trusted_ips: TrustedIp[];
  access_token_period: number;
};

export const insertAuthConfig = (db: Database, identityId: string, method: string, values: AuthConfigValues) =>
  db
    .insertInto("identity_auth_configs")
    .values({
      ...values,
      identity_id: identityId,
      method,
      access_token_trusted_ips: JSON.stringify(values.access_token_trusted_ips),
    })
    .returning(AUTH_CONFIG_COLUMNS)
    .executeTakeFirstOrThrow();

export const updateAuthConfig = (db: Database, configId: string, values: Partial<AuthConfigValues>) =>
  db
    .updateTable("identity_auth_configs")
    .set({
      ...values,
      access_token_trusted_ips: values.access_token_trusted_ips
        ? JSON.stringify(values.access_token_trusted_ips)
        : undefined,
      updated_at: new Date(),
    })
    .where("id", "=", configId)
    .returning(AUTH_CONFIG_COLUMNS)
    .executeTakeFirstOrThrow();

/** Deleting the config deletes every token it issued (foreign key cascade). */
export const deleteAuthConfig = (db: Database, configId: string) =>
  db.deleteFrom("identity_auth_configs").where("id", "=", configId).execute();

/**
 * Keeps the method from being removed until the transaction ends (a login takes this before it
 * spends anything, in the order removal takes them); undefined when it is already gone.
 */
export const lockAuthConfigForKeyShare = (trx: Tx, configId: string) =>
  trx.selectFrom("identity_auth_configs").select("id").where("id", "=", configId).forKeyShare().executeTakeFirst();
