import type { Insertable } from "kysely";
import type { Database } from "../../db/database";
import type { PkiCertificateAuthoritiesTable } from "../../db/tables/pki";

export const CA_COLUMNS = [
  "id",
  "project_id",
  "parent_ca_id",
  "name",
  "type",
  "status",
  "friendly_name",
  "common_name",
  "organization",
  "ou",
  "country",
  "province",
  "locality",
  "dn",
  "key_algorithm",
  "max_path_length",
  "serial_number",
  "not_before",
  "not_after",
  "created_at",
  "updated_at",
] as const;

/** The CA with its project's organization, so another tenant's CA can be answered as missing. */
export const findCaById = (db: Database, caId: string) =>
  db
    .selectFrom("pki_certificate_authorities as ca")
    .innerJoin("projects as p", "p.id", "ca.project_id")
    .select([...CA_COLUMNS.map((c) => `ca.${c}` as const), "p.org_id"])
    .where("ca.id", "=", caId)
    .executeTakeFirst();

export type CaRow = NonNullable<Awaited<ReturnType<typeof findCaById>>>;

/** The CA with what signing needs: its certificate, the chain above it and the encrypted key. */
export const findCaSigningMaterial = (db: Database, caId: string) =>
  db
    .selectFrom("pki_certificate_authorities")
    .select([...CA_COLUMNS, "certificate_pem", "certificate_chain_pem", "encrypted_private_key"])
    .where("id", "=", caId)
    .executeTakeFirst();

export type CaSigningRow = NonNullable<Awaited<ReturnType<typeof findCaSigningMaterial>>>;

export const findCaCertificate = (db: Database, caId: string) =>
  db
    .selectFrom("pki_certificate_authorities")
    .select(["certificate_pem", "certificate_chain_pem", "serial_number"])
    .where("id", "=", caId)
    .executeTakeFirstOrThrow();

export const insertCa = (db: Database, values: Insertable<PkiCertificateAuthoritiesTable>) =>
  db.insertInto("pki_certificate_authorities").values(values).returning(CA_COLUMNS).executeTakeFirstOrThrow();

/** Name and status of every CA of a project, oldest first, for permission filtering before paging. */
export const listCaKeys = (db: Database, projectId: string) =>
  db
    .selectFrom("pki_certificate_authorities")
    .select(["id", "name"])
    .where("project_id", "=", projectId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

export const listCasByIds = (db: Database, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.selectFrom("pki_certificate_authorities").select(CA_COLUMNS).where("id", "in", ids).execute();

export const updateCa = (db: Database, caId: string, values: { name?: string; status?: "active" | "disabled" }) =>
  db
    .updateTable("pki_certificate_authorities")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", caId)
    .returning(CA_COLUMNS)
    .executeTakeFirstOrThrow();

export const deleteCaRow = (db: Database, caId: string) =>
  db.deleteFrom("pki_certificate_authorities").where("id", "=", caId).execute();

/** What still depends on a CA: intermediates it signed and profiles issuing through it. */
export const countCaDependents = async (db: Database, caId: string) => {
  const children = await db
    .selectFrom("pki_certificate_authorities")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("parent_ca_id", "=", caId)
    .executeTakeFirstOrThrow();
  const profiles = await db
    .selectFrom("pki_certificate_profiles")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("ca_id", "=", caId)
    .executeTakeFirstOrThrow();
  return { children: Number(children.n), profiles: Number(profiles.n) };
};

/** Revoked certificates a CA issued, for its CRL. */
export const listRevokedOfCa = (db: Database, caId: string) =>
  db
    .selectFrom("pki_certificates")
    .select(["serial_number", "revoked_at", "revocation_reason"])
    .where("ca_id", "=", caId)
    .where("status", "=", "revoked")
    .orderBy("revoked_at")
    .execute();

/** The CA row after a renewal: its current certificate and the chain above it. */
export const updateCaCertificate = (
  db: Database,
  caId: string,
  values: {
    serial_number: string;
    not_before: Date;
    not_after: Date;
    certificate_pem: string;
    certificate_chain_pem: string;
  },
) =>
  db
    .updateTable("pki_certificate_authorities")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", caId)
    .execute();

/** Lock a CA row, so two renewals of one CA run one after the other. */
export const lockCa = (db: Database, caId: string) =>
  db.selectFrom("pki_certificate_authorities").select("id").where("id", "=", caId).forUpdate().executeTakeFirst();

/** The CAs a CA signed, with their own certificate, to rebuild their chains after it is renewed. */
export const listChildCas = (db: Database, parentCaId: string) =>
  db
    .selectFrom("pki_certificate_authorities")
    .select(["id", "certificate_pem"])
    .where("parent_ca_id", "=", parentCaId)
    .execute();

export const updateCaChain = (db: Database, caId: string, chain: string) =>
  db
    .updateTable("pki_certificate_authorities")
    .set({ certificate_chain_pem: chain, updated_at: new Date() })
    .where("id", "=", caId)
    .execute();
