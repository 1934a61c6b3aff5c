import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

/** Days before expiry when a profile with autoRenew leaves renewBeforeDays unset. */
export const DEFAULT_RENEW_BEFORE_DAYS = 7;

/**
 * Claim up to `limit` certificates due for automatic renewal: active, not yet renewed, of a profile
 * whose API configuration has autoRenew, inside their renewal window (renewBeforeDays before expiry,
 * but never more than half their lifetime, so a short-lived certificate is not renewed at once), and
 * not claimed or backing off. Claiming pushes the next attempt out by `leaseMs`, so another instance
 * skips them (SKIP LOCKED now, the lease afterwards) and a crashed claim is retried when it lapses.
 */
export const claimDueRenewals = async (trx: Tx, now: Date, limit: number, leaseMs: number) => {
  const at = sql<Date>`${now.toISOString()}::timestamptz`;
  const due = await trx
    .selectFrom("pki_certificates as c")
    .innerJoin("pki_enrollment_configs as e", (join) =>
      join.onRef("e.profile_id", "=", "c.profile_id").on("e.type", "=", "api"),
    )
    .select(["c.id", sql<boolean>`coalesce(e.settings->>'storePrivateKey', 'false') = 'true'`.as("store_key")])
    .where("c.status", "=", "active")
    .where("c.renewed_by_id", "is", null)
    .where(sql<boolean>`coalesce(e.settings->>'autoRenew', 'false') = 'true'`)
    .where("c.not_after", ">", at)
    .where(
      sql<boolean>`c.not_after - least(
          make_interval(days => coalesce((e.settings->>'renewBeforeDays')::int, ${DEFAULT_RENEW_BEFORE_DAYS})),
          (c.not_after - c.not_before) / 2) <= ${at}`,
    )
    .where((eb) => eb.or([eb("c.renewal_next_attempt_at", "is", null), eb("c.renewal_next_attempt_at", "<=", at)]))
    .orderBy("c.not_after")
    .limit(limit)
    .forUpdate("c")
    .skipLocked()
    .execute();
  if (due.length > 0) {
    await trx
      .updateTable("pki_certificates")
      .set({ renewal_next_attempt_at: new Date(now.getTime() + leaseMs) })
      .where(
        "id",
        "in",
        due.map((d) => d.id),
      )
      .execute();
  }
  return due;
};

/** A failed attempt: visible on the certificate, retried at `nextAttemptAt`. */
export const recordRenewalFailure = (db: Database, certificateId: string, error: string, nextAttemptAt: Date) =>
  db
    .updateTable("pki_certificates")
    .set((eb) => ({
      renewal_status: "failed",
      renewal_error: error.slice(0, 1000),
      renewal_attempts: eb("renewal_attempts", "+", 1),
      renewal_next_attempt_at: nextAttemptAt,
    }))
    .where("id", "=", certificateId)
    .returning("renewal_attempts")
    .executeTakeFirst();
