import type { CertKeyAlgorithm, CertificateAuthority } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { CaRow } from "./ca.repository";

type CaDtoRow = Omit<CaRow, "org_id">;

export const toCaDto = (row: CaDtoRow): CertificateAuthority => ({
  id: row.id,
  projectId: row.project_id,
  type: "internal",
  name: row.name,
  status: row.status,
  configuration: {
    type: row.type,
    friendlyName: row.friendly_name,
    commonName: row.common_name,
    organization: row.organization,
    ou: row.ou,
    country: row.country,
    province: row.province,
    locality: row.locality,
    dn: row.dn,
    parentCaId: row.parent_ca_id,
    serialNumber: row.serial_number,
    notBefore: toIso(row.not_before),
    notAfter: toIso(row.not_after),
    maxPathLength: row.max_path_length,
    keyAlgorithm: row.key_algorithm as CertKeyAlgorithm,
  },
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

/** The CA as a certificate profile shows it. */
export const toProfileCaDto = (row: CaDtoRow) => ({
  id: row.id,
  status: row.status,
  name: row.name,
  isExternal: false,
  externalType: null,
  productNameId: null,
  keyAlgorithm: row.key_algorithm as CertKeyAlgorithm,
});
