import { sql, type Insertable } from "kysely";
import type { Database } from "../../db/database";
import type { PkiCertificateProfilesTable, PkiEnrollmentConfigsTable } from "../../db/tables/pki";
import { likePattern } from "./pki-access";

export const PROFILE_COLUMNS = [
  "id",
  "project_id",
  "ca_id",
  "slug",
  "description",
  "enrollment_type",
  "issuer_type",
  "defaults",
  "external_configs",
  "created_at",
  "updated_at",
] as const;

export const findProfileById = (db: Database, profileId: string) =>
  db
    .selectFrom("pki_certificate_profiles as cp")
    .innerJoin("projects as p", "p.id", "cp.project_id")
    .select([...PROFILE_COLUMNS.map((c) => `cp.${c}` as const), "p.org_id"])
    .where("cp.id", "=", profileId)
    .executeTakeFirst();

export type ProfileRow = Omit<NonNullable<Awaited<ReturnType<typeof findProfileById>>>, "org_id">;

export const insertProfile = (db: Database, values: Insertable<PkiCertificateProfilesTable>) =>
  db.insertInto("pki_certificate_profiles").values(values).returning("id").executeTakeFirstOrThrow();

export const updateProfileRow = (
  db: Database,
  profileId: string,
  values: { slug?: string; description?: string | null; defaults?: string | null; external_configs?: string | null },
) =>
  db
    .updateTable("pki_certificate_profiles")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", profileId)
    .execute();

export const deleteProfileRow = (db: Database, profileId: string) =>
  db.deleteFrom("pki_certificate_profiles").where("id", "=", profileId).execute();

export type ProfileFilters = { enrollmentType?: string; issuerType?: string; caId?: string; search?: string };

/** Id and slug of every profile matching the filters, newest first, for permission filtering before paging. */
export const listProfileKeys = (db: Database, projectId: string, filters: ProfileFilters) =>
  db
    .selectFrom("pki_certificate_profiles")
    .select(["id", "slug"])
    .where("project_id", "=", projectId)
    .$if(filters.enrollmentType !== undefined, (qb) =>
      qb.where("enrollment_type", "=", filters.enrollmentType as "api"),
    )
    .$if(filters.issuerType !== undefined, (qb) => qb.where("issuer_type", "=", filters.issuerType as "ca"))
    .$if(filters.caId !== undefined, (qb) => qb.where("ca_id", "=", filters.caId!))
    .$if(Boolean(filters.search), (qb) =>
      qb.where((eb) =>
        eb.or([
          eb("slug", "ilike", likePattern(filters.search!)),
          eb("description", "ilike", likePattern(filters.search!)),
        ]),
      ),
    )
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();

export const listProfilesByIds = (db: Database, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.selectFrom("pki_certificate_profiles").select(PROFILE_COLUMNS).where("id", "in", ids).execute();

/** Enrollment configurations without their secrets; `has_secret` says whether one is stored. */
export const listConfigsOfProfiles = (db: Database, profileIds: string[]) =>
  profileIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("pki_enrollment_configs")
        .select(["id", "profile_id", "type", "settings", sql<boolean>`encrypted_secret is not null`.as("has_secret")])
        .where("profile_id", "in", profileIds)
        .execute();

export type EnrollmentConfigRow = Awaited<ReturnType<typeof listConfigsOfProfiles>>[number];

export const insertEnrollmentConfig = (db: Database, values: Insertable<PkiEnrollmentConfigsTable>) =>
  db.insertInto("pki_enrollment_configs").values(values).execute();

/** Replace the settings; the secret changes only when a new ciphertext is given. */
export const updateEnrollmentConfig = (
  db: Database,
  configId: string,
  settings: string,
  encryptedSecret?: string | null,
) =>
  db
    .updateTable("pki_enrollment_configs")
    .set({
      settings,
      updated_at: new Date(),
      ...(encryptedSecret !== undefined ? { encrypted_secret: encryptedSecret } : {}),
    })
    .where("id", "=", configId)
    .execute();

/**
 * Certificate counts per profile at `now`. Revoked certificates count only as revoked; the others
 * are expired once not_after has passed, active before, and expiring when active and ending by `soon`.
 */
export const metricsOfProfiles = async (db: Database, profileIds: string[], now: Date, soon: Date) => {
  if (profileIds.length === 0) return [];
  const at = sql`${now.toISOString()}::timestamptz`;
  const by = sql`${soon.toISOString()}::timestamptz`;
  const rows = await db
    .selectFrom("pki_certificates")
    .select((eb) => [
      "profile_id",
      eb.fn.countAll<string>().as("total"),
      sql<string>`count(*) filter (where status = 'revoked')`.as("revoked"),
      sql<string>`count(*) filter (where status <> 'revoked' and not_after <= ${at})`.as("expired"),
      sql<string>`count(*) filter (where status <> 'revoked' and not_after > ${at})`.as("active"),
      sql<string>`count(*) filter (where status <> 'revoked' and not_after > ${at} and not_after <= ${by})`.as(
        "expiring",
      ),
    ])
    .where("profile_id", "in", profileIds)
    .groupBy("profile_id")
    .execute();
  return rows.map((r) => ({
    profileId: r.profile_id!,
    totalCertificates: Number(r.total),
    activeCertificates: Number(r.active),
    expiredCertificates: Number(r.expired),
    expiringCertificates: Number(r.expiring),
    revokedCertificates: Number(r.revoked),
  }));
};

export const findProfileIdBySlug = async (db: Database, projectId: string, slug: string) =>
  (
    await db
      .selectFrom("pki_certificate_profiles")
      .select("id")
      .where("project_id", "=", projectId)
      .where("slug", "=", slug)
      .executeTakeFirst()
  )?.id;

/** One enrollment configuration of a profile with its encrypted secret. */
export const findConfigSecret = (db: Database, profileId: string, type: "est" | "acme" | "scep") =>
  db
    .selectFrom("pki_enrollment_configs")
    .select(["id", "settings", "encrypted_secret"])
    .where("profile_id", "=", profileId)
    .where("type", "=", type)
    .executeTakeFirst();
