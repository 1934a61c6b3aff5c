import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

export type CertificateInsert = {
  ssh_ca_id: string;
  project_id: string;
  ssh_certificate_template_id: string | null;
  ssh_host_id: string | null;
  serial_number: string;
  cert_type: string;
  principals: string[];
  key_id: string;
  not_before: Date;
  not_after: Date;
};

export const insertCertificate = (db: Database, row: CertificateInsert) =>
  db
    .insertInto("ssh_certificates")
    .values({ ...row, principals: JSON.stringify(row.principals) })
    .returning(["id"])
    .executeTakeFirstOrThrow();

const CERT_COLUMNS = [
  "s.id",
  "s.ssh_ca_id",
  "s.project_id",
  "s.ssh_certificate_template_id",
  "s.ssh_host_id",
  "s.serial_number",
  "s.cert_type",
  "s.principals",
  "s.key_id",
  "s.not_before",
  "s.not_after",
  "s.revoked_at",
] as const;

export const findCertificate = (db: Database, id: string) =>
  db
    .selectFrom("ssh_certificates as s")
    .innerJoin("projects as p", "p.id", "s.project_id")
    .select([...CERT_COLUMNS, "p.org_id"])
    .where("s.id", "=", id)
    .executeTakeFirst();

export type CertificateRow = NonNullable<Awaited<ReturnType<typeof findCertificate>>>;

export const listProjectCertificates = async (db: Database, projectId: string, offset: number, limit: number) => {
  const [rows, total] = await Promise.all([
    db
      .selectFrom("ssh_certificates as s")
      .select(CERT_COLUMNS)
      .where("s.project_id", "=", projectId)
      .orderBy("s.created_at", "desc")
      .orderBy("s.id")
      .offset(offset)
      .limit(limit)
      .execute(),
    db
      .selectFrom("ssh_certificates")
      .select(sql<string>`count(*)`.as("n"))
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, totalCount: Number(total.n) };
};

/**
 * Marks a certificate revoked and moves its CA's KRL version on, in one statement each inside one
 * transaction; undefined when it was revoked already.
 */
export const revokeCertificateRow = async (trx: Tx, id: string, reason: string | null) => {
  const row = await trx
    .updateTable("ssh_certificates")
    .set({ revoked_at: sql`now()`, revocation_reason: reason })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .returning(["ssh_ca_id", "serial_number", "revoked_at"])
    .executeTakeFirst();
  if (row)
    await trx
      .updateTable("ssh_cas")
      .set({ krl_version: sql`krl_version + 1` })
      .where("id", "=", row.ssh_ca_id)
      .execute();
  return row;
};

/**
 * The serials a CA's KRL lists: revoked certificates until a day after they expire (sshd refuses an
 * expired one anyway), ascending.
 */
export const listRevokedSerials = async (db: Database, caId: string) => {
  const rows = await db
    .selectFrom("ssh_certificates")
    .select("serial_number")
    .where("ssh_ca_id", "=", caId)
    .where("revoked_at", "is not", null)
    .where("not_after", ">", sql<Date>`now() - interval '1 day'`)
    .execute();
  return rows.map((r) => BigInt(r.serial_number)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
};
