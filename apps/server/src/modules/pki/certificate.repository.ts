import type { Tx } from "../../db/transaction";
import { sql, type Insertable } from "kysely";
import type { Database } from "../../db/database";
import type { PkiCertificatesTable } from "../../db/tables/pki";
import { likePattern } from "./pki-access";

export const CERTIFICATE_COLUMNS = [
  "id",
  "project_id",
  "ca_id",
  "profile_id",
  "status",
  "serial_number",
  "common_name",
  "alt_names",
  "friendly_name",
  "key_algorithm",
  "signature_algorithm",
  "key_usages",
  "extended_key_usages",
  "not_before",
  "not_after",
  "revoked_at",
  "revocation_reason",
  "renewed_from_id",
  "renewed_by_id",
  "renewal_status",
  "renewal_error",
  "created_at",
  "updated_at",
] as const;

const hasPrivateKey = sql<boolean>`encrypted_private_key is not null`.as("has_private_key");

export const findCertificateById = (db: Database, certificateId: string) =>
  db
    .selectFrom("pki_certificates as c")
    .innerJoin("projects as p", "p.id", "c.project_id")
    .select([
      ...CERTIFICATE_COLUMNS.map((col) => `c.${col}` as const),
      sql<boolean>`c.encrypted_private_key is not null`.as("has_private_key"),
      "p.org_id",
    ])
    .where("c.id", "=", certificateId)
    .executeTakeFirst();

export type CertificateRow = Omit<NonNullable<Awaited<ReturnType<typeof findCertificateById>>>, "org_id">;

export const insertCertificate = (db: Database, values: Insertable<PkiCertificatesTable>) =>
  db
    .insertInto("pki_certificates")
    .values(values)
    .returning([...CERTIFICATE_COLUMNS, hasPrivateKey])
    .executeTakeFirstOrThrow();

export const findCertificatePem = (db: Database, certificateId: string) =>
  db
    .selectFrom("pki_certificates")
    .select(["certificate_pem", "certificate_chain_pem", "serial_number"])
    .where("id", "=", certificateId)
    .executeTakeFirstOrThrow();

export const findEncryptedPrivateKey = async (db: Database, certificateId: string) =>
  (
    await db
      .selectFrom("pki_certificates")
      .select("encrypted_private_key")
      .where("id", "=", certificateId)
      .executeTakeFirst()
  )?.encrypted_private_key ?? null;

/** Revokes an active certificate; undefined when it was already revoked (also under a concurrent revoke). */
export const revokeCertificateRow = (db: Database, certificateId: string, reason: string, at: Date) =>
  db
    .updateTable("pki_certificates")
    .set({ status: "revoked", revoked_at: at, revocation_reason: reason, updated_at: at })
    .where("id", "=", certificateId)
    .where("status", "=", "active")
    .returning(["serial_number", "revoked_at"])
    .executeTakeFirst();

export type CertificateFilters = { profileId?: string; caId?: string; status?: "active" | "revoked"; search?: string };

const filtered = (db: Database, projectId: string, f: CertificateFilters) =>
  db
    .selectFrom("pki_certificates")
    .where("project_id", "=", projectId)
    .$if(f.profileId !== undefined, (qb) => qb.where("profile_id", "=", f.profileId!))
    .$if(f.caId !== undefined, (qb) => qb.where("ca_id", "=", f.caId!))
    .$if(f.status !== undefined, (qb) => qb.where("status", "=", f.status!))
    .$if(Boolean(f.search), (qb) =>
      qb.where((eb) =>
        eb.or([
          eb("common_name", "ilike", likePattern(f.search!)),
          eb("alt_names", "ilike", likePattern(f.search!)),
          eb("serial_number", "ilike", likePattern(f.search!)),
          eb("friendly_name", "ilike", likePattern(f.search!)),
        ]),
      ),
    );

/** The fields permission conditions look at, for every matching certificate, newest first. */
export const listCertificateKeys = (db: Database, projectId: string, f: CertificateFilters) =>
  filtered(db, projectId, f)
    .select(["id", "common_name", "alt_names", "serial_number", "friendly_name", "status"])
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();

export const countCertificates = async (db: Database, projectId: string, f: CertificateFilters) =>
  Number(
    (
      await filtered(db, projectId, f)
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

export const listCertificatePage = (
  db: Database,
  projectId: string,
  f: CertificateFilters,
  offset: number,
  limit: number,
) =>
  filtered(db, projectId, f)
    .select([...CERTIFICATE_COLUMNS, hasPrivateKey])
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .offset(offset)
    .limit(limit)
    .execute();

export const listCertificatesByIds = (db: Database, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("pki_certificates")
        .select([...CERTIFICATE_COLUMNS, hasPrivateKey])
        .where("id", "in", ids)
        .execute();

/** What renewing a certificate needs: its key, subject, names, lifetime and profile. */
export const findRenewalSource = (db: Database, certificateId: string) =>
  db
    .selectFrom("pki_certificates")
    .select([
      "id",
      "profile_id",
      "status",
      "common_name",
      "alt_names",
      "friendly_name",
      "key_algorithm",
      "not_before",
      "not_after",
      "certificate_pem",
      "renewed_by_id",
      "renewal_attempts",
    ])
    .where("id", "=", certificateId)
    .executeTakeFirst();

export type RenewalSource = NonNullable<Awaited<ReturnType<typeof findRenewalSource>>>;

/** Lock a certificate for renewal; undefined when it is revoked or was renewed meanwhile. */
export const lockRenewable = (trx: Tx, certificateId: string) =>
  trx
    .selectFrom("pki_certificates")
    .select(["id"])
    .where("id", "=", certificateId)
    .where("status", "=", "active")
    .where("renewed_by_id", "is", null)
    .forUpdate()
    .executeTakeFirst();

export const markRenewed = (trx: Tx, certificateId: string, renewedById: string, at: Date) =>
  trx
    .updateTable("pki_certificates")
    .set({ renewed_by_id: renewedById, renewal_status: "renewed", renewal_error: null, updated_at: at })
    .where("id", "=", certificateId)
    .execute();

/** A certificate a profile issued, by serial number. */
export const findCertificateOfProfileBySerial = (db: Database, profileId: string, serialNumber: string) =>
  db
    .selectFrom("pki_certificates")
    .select(["id", "status", "certificate_pem"])
    .where("profile_id", "=", profileId)
    .where("serial_number", "=", serialNumber)
    .executeTakeFirst();

/** The project and organization of a certificate profile. */
export const findProfileOwner = (db: Database, profileId: string | null) =>
  profileId === null
    ? Promise.resolve(undefined)
    : db
        .selectFrom("pki_certificate_profiles as pr")
        .innerJoin("projects as p", "p.id", "pr.project_id")
        .select(["p.id as projectId", "p.org_id as orgId"])
        .where("pr.id", "=", profileId)
        .executeTakeFirst();

/** Status of the certificates a CA issued with these serials, for its OCSP responder. */
export const listCertificateStatusesOfCa = (db: Database, caId: string, serials: string[]) =>
  serials.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("pki_certificates")
        .select(["serial_number", "status", "revoked_at", "revocation_reason"])
        .where("ca_id", "=", caId)
        .where("serial_number", "in", serials)
        .execute();
