import {
  splitAltNames,
  type Certificate,
  type CertKeyAlgorithm,
  type ListCertificatesQuery,
  type RevocationReason,
} from "@keyward/contract";
import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import {
  countCertificates,
  findCertificateById,
  findCertificatePem,
  findEncryptedPrivateKey,
  listCertificateKeys,
  listCertificatePage,
  listCertificatesByIds,
  revokeCertificateRow,
  type CertificateRow,
} from "./certificate.repository";
import { dependsOnObject, pageVisible, permissionForOwned } from "./pki-access";
import { inTransaction } from "../../db/transaction";

const SUBJECT = "certificates";

export const toCertificateDto = (row: CertificateRow): Certificate => ({
  id: row.id,
  projectId: row.project_id,
  caId: row.ca_id,
  profileId: row.profile_id,
  status: row.status,
  serialNumber: row.serial_number,
  commonName: row.common_name,
  altNames: row.alt_names,
  friendlyName: row.friendly_name,
  keyAlgorithm: row.key_algorithm as CertKeyAlgorithm,
  signatureAlgorithm: row.signature_algorithm,
  keyUsages: row.key_usages,
  extendedKeyUsages: row.extended_key_usages,
  notBefore: toIso(row.not_before),
  notAfter: toIso(row.not_after),
  revokedAt: toIso(row.revoked_at),
  revocationReason: row.revocation_reason as RevocationReason | null,
  hasPrivateKey: row.has_private_key,
  renewedFromCertificateId: row.renewed_from_id,
  renewedByCertificateId: row.renewed_by_id,
  renewalStatus: row.renewal_status,
  renewalError: row.renewal_error,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

/** What `certificates` permission conditions are evaluated against. */
export const permissionObject = (row: {
  common_name: string;
  alt_names: string;
  serial_number: string;
  friendly_name: string;
  status: string;
}) => ({
  commonName: row.common_name,
  altNames: splitAltNames(row.alt_names),
  serialNumber: row.serial_number,
  friendlyName: row.friendly_name,
  status: row.status,
});

export const loadCertificate = async (ctx: RequestContext, certificateId: string) => {
  const found = isUuid(certificateId) ? await findCertificateById(ctx.deps.db, certificateId) : undefined;
  const permission = await permissionForOwned(ctx, found, `Certificate with ID '${certificateId}' not found`);
  const { org_id: _org, ...certificate } = found!;
  return { certificate, ...permission };
};

export const getCertificate = async (ctx: RequestContext, certificateId: string) => {
  const { certificate, ability } = await loadCertificate(ctx, certificateId);
  assertCan(ability, "read", SUBJECT, permissionObject(certificate));
  return toCertificateDto(certificate);
};

export const getCertificateBundle = async (ctx: RequestContext, certificateId: string) => {
  const { certificate, ability } = await loadCertificate(ctx, certificateId);
  assertCan(ability, "read", SUBJECT, permissionObject(certificate));
  const pem = await findCertificatePem(ctx.deps.db, certificate.id);
  return {
    certificate: pem.certificate_pem,
    certificateChain: pem.certificate_chain_pem,
    serialNumber: pem.serial_number,
  };
};

export const getCertificatePrivateKey = async (ctx: RequestContext, certificateId: string) => {
  const { certificate, ability } = await loadCertificate(ctx, certificateId);
  assertCan(ability, "read-private-key", SUBJECT, permissionObject(certificate));
  const encrypted = await findEncryptedPrivateKey(ctx.deps.db, certificate.id);
  if (!encrypted) throw new NotFoundError(`No private key is stored for certificate with ID '${certificateId}'`);
  return { privateKey: ctx.deps.secretBox.decrypt(encrypted, `pki-certificate:${certificate.id}`) };
};

/** Certificate, chain and the stored key; Infisical's bundle route needs read-private-key even without a key. */
export const getCertificateKeyBundle = async (ctx: RequestContext, certificateId: string) => {
  const { certificate, ability } = await loadCertificate(ctx, certificateId);
  assertCan(ability, "read-private-key", SUBJECT, permissionObject(certificate));
  const [pem, encrypted] = await Promise.all([
    findCertificatePem(ctx.deps.db, certificate.id),
    findEncryptedPrivateKey(ctx.deps.db, certificate.id),
  ]);
  return {
    certificate: pem.certificate_pem,
    certificateChain: pem.certificate_chain_pem || null,
    privateKey: encrypted ? ctx.deps.secretBox.decrypt(encrypted, `pki-certificate:${certificate.id}`) : null,
    serialNumber: pem.serial_number,
  };
};

export const revokeCertificate = async (ctx: RequestContext, certificateId: string, reason: RevocationReason) => {
  const { certificate, ability } = await loadCertificate(ctx, certificateId);
  assertCan(ability, "delete", SUBJECT, permissionObject(certificate));
  const revoked =
    certificate.status === "active"
      ? await inTransaction(ctx, (trx) => revokeCertificateRow(trx, certificate.id, reason, new Date()))
      : undefined;
  if (!revoked) throw new BadRequestError("The certificate is already revoked");
  return {
    message: "Successfully revoked certificate",
    serialNumber: revoked.serial_number,
    revokedAt: toIso(revoked.revoked_at!),
  };
};

export const listCertificates = async (ctx: RequestContext, query: ListCertificatesQuery) => {
  const { project, ability } = await getProjectPermission(ctx, query.projectId, "cert-manager");
  assertCan(ability, "read", SUBJECT);
  // Ids that cannot exist match nothing.
  if (
    (query.profileId !== undefined && !isUuid(query.profileId)) ||
    (query.caId !== undefined && !isUuid(query.caId))
  ) {
    return { certificates: [], totalCount: 0 };
  }
  if (!dependsOnObject(ability, "read", SUBJECT)) {
    const [rows, totalCount] = await Promise.all([
      // An offset past any possible row still pages to nothing, never to a bigint overflow in SQL.
      listCertificatePage(ctx.deps.db, project.id, query, Math.min(query.offset, Number.MAX_SAFE_INTEGER), query.limit),
      countCertificates(ctx.deps.db, project.id, query),
    ]);
    return { certificates: rows.map(toCertificateDto), totalCount };
  }
  const keys = await listCertificateKeys(ctx.deps.db, project.id, query);
  const { page, totalCount } = pageVisible(
    keys,
    permissionObject,
    (object) => ability.can("read", SUBJECT, object),
    query.offset,
    query.limit,
  );
  const rows = new Map(
    (
      await listCertificatesByIds(
        ctx.deps.db,
        page.map((k) => k.id),
      )
    ).map((r) => [r.id, r]),
  );
  return { certificates: page.flatMap((k) => (rows.has(k.id) ? [toCertificateDto(rows.get(k.id)!)] : [])), totalCount };
};
