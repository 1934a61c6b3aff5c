import type { Tx } from "../../db/transaction";
import type { Insertable } from "kysely";
import type { Database } from "../../db/database";
import type { PkiCaCertificatesTable } from "../../db/tables/pki";

export const insertCaCertificate = (db: Database, values: Insertable<PkiCaCertificatesTable>) =>
  db.insertInto("pki_ca_certificates").values(values).execute();

/** Every certificate a CA has had, oldest first. */
export const listCaCertificatesOf = (db: Database, caId: string) =>
  db
    .selectFrom("pki_ca_certificates")
    .select(["id", "serial_number", "certificate_pem", "certificate_chain_pem", "not_before", "not_after"])
    .where("ca_id", "=", caId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

/** CA certificates this CA signed that are revoked (intermediates deleted since), for its CRL. */
export const listRevokedCaCertificatesIssuedBy = (db: Database, issuerCaId: string) =>
  db
    .selectFrom("pki_ca_certificates")
    .select(["serial_number", "revoked_at", "revocation_reason"])
    .where("issuer_ca_id", "=", issuerCaId)
    .where("revoked_at", "is not", null)
    .execute();

/**
 * An intermediate about to be deleted: its certificates signed by the parent become revoked and
 * detached from it (so the CA's deletion does not cascade to them), and the parent's CRL keeps
 * telling relying parties that nothing under it is to be trusted. A root's rows go with the root.
 */
export const revokeCertificatesOfCa = (trx: Tx, caId: string, at: Date) =>
  trx
    .updateTable("pki_ca_certificates")
    .set((eb) => ({
      ca_id: null,
      revoked_at: eb.fn.coalesce("revoked_at", eb.val(at)),
      revocation_reason: eb.fn.coalesce("revocation_reason", eb.val("CESSATION_OF_OPERATION")),
      updated_at: at,
    }))
    .where("ca_id", "=", caId)
    .where("issuer_ca_id", "is not", null)
    .execute();

/** CA certificates (intermediates) a CA signed with these serials, revoked or not, for its OCSP responder. */
export const listCaCertificateStatusesIssuedBy = (db: Database, issuerCaId: string, serials: string[]) =>
  serials.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("pki_ca_certificates")
        .select(["serial_number", "revoked_at", "revocation_reason"])
        .where("issuer_ca_id", "=", issuerCaId)
        .where("serial_number", "in", serials)
        .execute();
