import type { Insertable } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";
import type { PkiScepRasTable } from "../../../db/tables/pki-scep";

const RA_COLUMNS = [
  "id",
  "profile_id",
  "serial_number",
  "certificate_pem",
  "encrypted_private_key",
  "not_after",
] as const;

/** The profile's current (newest) RA certificate. */
export const findCurrentRa = (db: Database, profileId: string) =>
  db
    .selectFrom("pki_scep_ras")
    .select(RA_COLUMNS)
    .where("profile_id", "=", profileId)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();

export type RaRow = NonNullable<Awaited<ReturnType<typeof findCurrentRa>>>;

/** An RA certificate of the profile by serial (hex, lower case): a client may still hold an older one. */
export const findRaBySerial = (db: Database, profileId: string, serialNumber: string) =>
  db
    .selectFrom("pki_scep_ras")
    .select(RA_COLUMNS)
    .where("profile_id", "=", profileId)
    .where("serial_number", "=", serialNumber)
    .executeTakeFirst();

/** The current RA certificate of each profile, for showing profiles. */
export const listCurrentRas = async (db: Database, profileIds: string[]) => {
  if (profileIds.length === 0) return [];
  const rows = await db
    .selectFrom("pki_scep_ras")
    .select(["profile_id", "certificate_pem", "not_after", "created_at"])
    .where("profile_id", "in", profileIds)
    .orderBy("created_at", "desc")
    .execute();
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.profile_id) && seen.add(r.profile_id));
};

export const insertRa = (db: Database, values: Insertable<PkiScepRasTable>) =>
  db.insertInto("pki_scep_ras").values(values).execute();

export const deleteExpiredRas = (db: Database, profileId: string, now: Date) =>
  db.deleteFrom("pki_scep_ras").where("profile_id", "=", profileId).where("not_after", "<=", now).execute();

/** Lock the profile row, so pending challenges are counted and added one caller at a time. */
export const lockProfileForChallenges = (trx: Tx, profileId: string) =>
  trx.selectFrom("pki_certificate_profiles").select("id").where("id", "=", profileId).forUpdate().executeTakeFirst();

export const deleteExpiredChallenges = (db: Database, profileId: string, now: Date) =>
  db.deleteFrom("pki_scep_challenges").where("profile_id", "=", profileId).where("expires_at", "<=", now).execute();

export const countPendingChallenges = async (db: Database, profileId: string, now: Date) =>
  Number(
    (
      await db
        .selectFrom("pki_scep_challenges")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("profile_id", "=", profileId)
        .where("expires_at", ">", now)
        .executeTakeFirstOrThrow()
    ).n,
  );

export const insertChallenge = (db: Database, profileId: string, challengeHash: Buffer, expiresAt: Date) =>
  db
    .insertInto("pki_scep_challenges")
    .values({ profile_id: profileId, challenge_hash: challengeHash, expires_at: expiresAt })
    .execute();

/** Spend a pending, unexpired challenge: true when this caller spent it (a second caller finds nothing). */
export const consumeChallenge = async (db: Database, profileId: string, challengeHash: Buffer, now: Date) =>
  (
    await db
      .deleteFrom("pki_scep_challenges")
      .where("challenge_hash", "=", challengeHash)
      .where("profile_id", "=", profileId)
      .where("expires_at", ">", now)
      .returning("profile_id")
      .execute()
  ).length === 1;
