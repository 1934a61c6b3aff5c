import { sql } from "kysely";
import type { Database } from "../../../db/database";

/**
 * Login lockouts per auth config and key (an LDAP username, a Universal Auth client id). Kept in
 * PostgreSQL so every instance sees the same counters; each failure is one atomic upsert.
 */
export type LockoutSettings = { threshold: number; durationSeconds: number; counterResetSeconds: number };

/** The row's lock has ended, or its counting window has passed without a lock. */
const STALE = (
  nowIso: string,
) => sql<boolean>`((identity_auth_lockouts.locked_until is not null and identity_auth_lockouts.locked_until <= ${nowIso}::timestamptz)
    or (identity_auth_lockouts.locked_until is null and identity_auth_lockouts.window_expires_at <= ${nowIso}::timestamptz))`;

/** The key's lockout row as a login sees it when it starts: absent, counting, or locked at `now`. */
export const findLockoutState = (db: Database, configId: string, key: string, now: Date) =>
  db
    .selectFrom("identity_auth_lockouts")
    .select(sql<boolean>`(locked_until is not null and locked_until > ${now.toISOString()}::timestamptz)`.as("locked"))
    .where("auth_config_id", "=", configId)
    .where("lockout_key", "=", key)
    .executeTakeFirst();

/**
 * Count one wrong credential and lock the key once the count reaches the threshold, in a single
 * upsert: parallel failures each see the count the one before them left, so the lock engages at the
 * threshold and the count never ends below it. A stale counter restarts at 1; a lock in force is
 * kept as it is (a failure does not extend it).
 */
export const recordLoginFailure = async (
  db: Database,
  configId: string,
  key: string,
  settings: LockoutSettings,
  now: Date,
) => {
  const nowIso = now.toISOString();
  const windowEnd = new Date(now.getTime() + settings.counterResetSeconds * 1000).toISOString();
  const lockEnd = new Date(now.getTime() + settings.durationSeconds * 1000).toISOString();
  const firstLock = settings.threshold <= 1 ? lockEnd : null;
  const stale = STALE(nowIso);
  return db
    .insertInto("identity_auth_lockouts")
    .values({
      auth_config_id: configId,
      lockout_key: key,
      failed_attempts: 1,
      window_expires_at: windowEnd,
      locked_until: firstLock,
    })
    .onConflict((oc) =>
      oc.columns(["auth_config_id", "lockout_key"]).doUpdateSet({
        failed_attempts: sql`(case when ${stale} then 1 else identity_auth_lockouts.failed_attempts + 1 end)`,
        locked_until: sql`(case
          when ${stale} then ${firstLock}::timestamptz
          when identity_auth_lockouts.locked_until is not null then identity_auth_lockouts.locked_until
          when identity_auth_lockouts.failed_attempts + 1 >= ${settings.threshold} then ${lockEnd}::timestamptz
          else null end)`,
        window_expires_at: sql`${windowEnd}::timestamptz`,
      }),
    )
    .returning(["failed_attempts", "locked_until"])
    .executeTakeFirstOrThrow();
};

/**
 * A right credential clears the failure count, but not a lock in force: parallel failures may have
 * locked the key while this login ran, and that lock must hold for the logins after it.
 */
export const clearLoginFailures = (db: Database, configId: string, key: string, now: Date) =>
  db
    .deleteFrom("identity_auth_lockouts")
    .where("auth_config_id", "=", configId)
    .where("lockout_key", "=", key)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", now.toISOString())]))
    .execute();

/** Drop every lockout of a config; answers how many were active. */
export const clearLockouts = async (db: Database, configId: string, now: Date) => {
  const rows = await db
    .deleteFrom("identity_auth_lockouts")
    .where("auth_config_id", "=", configId)
    .returning(["locked_until"])
    .execute();
  return rows.filter((row) => row.locked_until !== null && new Date(row.locked_until) > now).length;
};
