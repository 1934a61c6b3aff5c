import { sql } from "kysely";
import type { Database } from "../../db/database";

/**
 * Login lockouts per auth config and key (an LDAP username, a Universal Auth client id). Kept in
 * PostgreSQL so every instance sees the same counters; each failure is one atomic upsert.
 */
export type LockoutSettings = { threshold: number; durationSeconds: number; counterResetSeconds: number };

export const isLockedOut = async (db: Database, configId: string, key: string, now: Date) =>
  (await db
    .selectFrom("identity_auth_lockouts")
    .select("id")
    .where("auth_config_id", "=", configId)
    .where("lockout_key", "=", key)
    .where("locked_until", ">", now)
    .executeTakeFirst()) !== undefined;

/**
 * Count one failure: a stale counter (its reset window or its lock over) restarts at 1, and the
 * failure that reaches the threshold starts a lock of `durationSeconds`.
 */
export const recordLoginFailure = (db: Database, configId: string, key: string, settings: LockoutSettings, now: Date) => {
  const nowIso = now.toISOString();
  const windowEnd = new Date(now.getTime() + settings.counterResetSeconds * 1000).toISOString();
  const lockEnd = new Date(now.getTime() + settings.durationSeconds * 1000).toISOString();
  const stale = sql<boolean>`((identity_auth_lockouts.locked_until is not null and identity_auth_lockouts.locked_until <= ${nowIso}::timestamptz)
    or (identity_auth_lockouts.locked_until is null and identity_auth_lockouts.window_expires_at <= ${nowIso}::timestamptz))`;
  const attempts = sql<number>`(case when ${stale} then 1 else identity_auth_lockouts.failed_attempts + 1 end)`;
  return db
    .insertInto("identity_auth_lockouts")
    .values({
      auth_config_id: configId,
      lockout_key: key,
      failed_attempts: 1,
      window_expires_at: windowEnd,
      locked_until: settings.threshold <= 1 ? lockEnd : null,
    })
    .onConflict((oc) =>
      oc.columns(["auth_config_id", "lockout_key"]).doUpdateSet({
        failed_attempts: attempts,
        locked_until: sql`(case when ${attempts} >= ${settings.threshold} then ${lockEnd}::timestamptz else null end)`,
        window_expires_at: sql`${windowEnd}::timestamptz`,
      }),
    )
    .execute();
};

export const clearLockout = (db: Database, configId: string, key: string) =>
  db.deleteFrom("identity_auth_lockouts").where("auth_config_id", "=", configId).where("lockout_key", "=", key).execute();

/** Drop every lockout of a config; answers how many were active. */
export const clearLockouts = async (db: Database, configId: string, now: Date) => {
  const rows = await db
    .deleteFrom("identity_auth_lockouts")
    .where("auth_config_id", "=", configId)
    .returning(["locked_until"])
    .execute();
  return rows.filter((row) => row.locked_until !== null && new Date(row.locked_until) > now).length;
};
