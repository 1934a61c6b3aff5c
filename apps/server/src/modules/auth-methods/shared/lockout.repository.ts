import { sql } from "kysely";
import type { Database } from "../../../db/database";

/**
 * Login lockouts per auth config and key (an LDAP username, a Universal Auth client id). Kept in
 * PostgreSQL so every instance sees the same counters; each failure is one atomic upsert.
 */
export type LockoutSettings = { threshold: number; durationSeconds: number; counterResetSeconds: number };

const STALE = (
  nowIso: string,
) => sql<boolean>`((identity_auth_lockouts.locked_until is not null and identity_auth_lockouts.locked_until <= ${nowIso}::timestamptz)
    or (identity_auth_lockouts.locked_until is null and identity_auth_lockouts.window_expires_at <= ${nowIso}::timestamptz))`;

/**
 * Take one attempt before the credential is checked, in one atomic upsert, so parallel guesses can
 * never exceed the threshold (checking first and counting after let every in-flight guess through).
 * A stale counter (its window or its lock over) restarts at 1. Answers false while the key is
 * locked or every attempt of the window is taken.
 */
export const reserveLoginAttempt = async (
  db: Database,
  configId: string,
  key: string,
  settings: LockoutSettings,
  now: Date,
) => {
  const nowIso = now.toISOString();
  const windowEnd = new Date(now.getTime() + settings.counterResetSeconds * 1000).toISOString();
  const stale = STALE(nowIso);
  const row = await db
    .insertInto("identity_auth_lockouts")
    .values({
      auth_config_id: configId,
      lockout_key: key,
      failed_attempts: 1,
      window_expires_at: windowEnd,
      locked_until: null,
    })
    .onConflict((oc) =>
      oc
        .columns(["auth_config_id", "lockout_key"])
        .doUpdateSet({
          failed_attempts: sql`(case when ${stale} then 1 else identity_auth_lockouts.failed_attempts + 1 end)`,
          locked_until: sql`(case when ${stale} then null else identity_auth_lockouts.locked_until end)`,
          window_expires_at: sql`${windowEnd}::timestamptz`,
        })
        .where(
          sql<boolean>`(${stale} or (identity_auth_lockouts.locked_until is null and identity_auth_lockouts.failed_attempts < ${settings.threshold}))`,
        ),
    )
    .returning("failed_attempts")
    .executeTakeFirst();
  return row !== undefined;
};

/** A reserved attempt failed: once the attempts reach the threshold, lock for `durationSeconds`. */
export const lockIfThresholdReached = (
  db: Database,
  configId: string,
  key: string,
  settings: LockoutSettings,
  now: Date,
) =>
  db
    .updateTable("identity_auth_lockouts")
    .set({ locked_until: new Date(now.getTime() + settings.durationSeconds * 1000).toISOString() })
    .where("auth_config_id", "=", configId)
    .where("lockout_key", "=", key)
    .where("failed_attempts", ">=", settings.threshold)
    .where("locked_until", "is", null)
    .execute();

/** Give back a reserved attempt that never checked the credential (the directory was unreachable). */
export const releaseLoginAttempt = (db: Database, configId: string, key: string) =>
  db
    .updateTable("identity_auth_lockouts")
    .set({ failed_attempts: sql`greatest(failed_attempts - 1, 0)` })
    .where("auth_config_id", "=", configId)
    .where("lockout_key", "=", key)
    .where("locked_until", "is", null)
    .execute();

export const clearLockout = (db: Database, configId: string, key: string) =>
  db
    .deleteFrom("identity_auth_lockouts")
    .where("auth_config_id", "=", configId)
    .where("lockout_key", "=", key)
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
