import { inTransaction } from "../../db/transaction";
import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { insertCaCertificate, listCaCertificatesOf } from "./ca-certificate.repository";
import { findCaSigningMaterial, listChildCas, lockCa, updateCaCertificate, updateCaChain } from "./ca.repository";
import { caNotFound, loadCa, signerOfCa } from "./ca.service";
import { joinPem } from "./pki-access";
import { ocspUrlOf } from "./ocsp/ocsp-url";
import { defaultSignatureAlgorithm, randomSerialNumber, signCertificate, x509, type Signer } from "./x509";

const SUBJECT = "certificate-authorities";

/**
 * A new certificate for the CA over its existing key pair and subject: certificates it issued keep
 * verifying under the old and the new one alike, and one CRL (same name, same key) serves both.
 */
export const renewCa = async (ctx: RequestContext, caId: string, body: { notAfter: string }) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "renew", SUBJECT, { name: ca.name });
  const material = await findCaSigningMaterial(ctx.deps.db, ca.id);
  if (!material) throw caNotFound(caId);
  const now = new Date();
  const notAfter = new Date(body.notAfter);
  if (notAfter <= now) throw new BadRequestError("notAfter must be in the future");
  const parent = material.parent_ca_id
    ? isUuid(material.parent_ca_id)
      ? await findCaSigningMaterial(ctx.deps.db, material.parent_ca_id)
      : undefined
    : undefined;
  if (material.parent_ca_id) {
    if (!parent) throw new BadRequestError("The parent CA of this intermediate no longer exists");
    if (parent.status !== "active") throw new BadRequestError(`The parent CA ${parent.name} is disabled`);
    if (notAfter > new Date(parent.not_after)) {
      throw new BadRequestError(
        `notAfter must not be later than the parent CA's expiry (${toIso(parent.not_after)}); renew the parent first`,
      );
    }
  }
  const current = new x509.X509Certificate(material.certificate_pem);
  const own = signerOfCa(ctx, material);
  const signer: Signer = parent ? signerOfCa(ctx, parent) : own;
  const serialNumber = randomSerialNumber();
  const certificate = await signCertificate(
    {
      serialNumber,
      subject: current.subjectName,
      publicKey: current.publicKey,
      notBefore: now,
      notAfter,
      signatureAlgorithm: defaultSignatureAlgorithm(signer.keyAlgorithm),
      basicConstraints: {
        isCA: true,
        pathLength: material.max_path_length === -1 ? undefined : material.max_path_length,
      },
      keyUsages: ["key_cert_sign", "crl_sign", "digital_signature"],
      extendedKeyUsages: [],
      altNames: [],
      ocspUrl: parent ? ocspUrlOf(ctx.deps.env, parent.id) : undefined,
    },
    signer,
  );
  const certificatePem = certificate.toString("pem");
  const chain = parent ? joinPem(parent.certificate_pem, parent.certificate_chain_pem) : "";
  await inTransaction(ctx, async (trx) => {
    if (!(await lockCa(trx, ca.id))) throw caNotFound(caId);
    await updateCaCertificate(trx, ca.id, {
      serial_number: serialNumber,
      not_before: certificate.notBefore,
      not_after: certificate.notAfter,
      certificate_pem: certificatePem,
      certificate_chain_pem: chain,
    });
    // CAs below serve chains that now start with the renewed certificate (the old one stays valid too).
    const refresh = async (parentId: string, parentChain: string) => {
      for (const child of await listChildCas(trx, parentId)) {
        await updateCaChain(trx, child.id, parentChain);
        await refresh(child.id, joinPem(child.certificate_pem, parentChain));
      }
    };
    await refresh(ca.id, joinPem(certificatePem, chain));
    await insertCaCertificate(trx, {
      ca_id: ca.id,
      issuer_ca_id: parent?.id ?? null,
      serial_number: serialNumber,
      certificate_pem: certificatePem,
      certificate_chain_pem: chain,
      not_before: certificate.notBefore,
      not_after: certificate.notAfter,
    });
  });
  const versions = await listCaCertificatesOf(ctx.deps.db, ca.id);
  return {
    certificate: certificatePem,
    certificateChain: chain,
    serialNumber,
    certId: versions.find((v) => v.serial_number === serialNumber)?.id ?? "",
  };
};

/** Every unexpired certificate the CA has had, numbered from its first. */
export const listCaCertificates = async (ctx: RequestContext, caId: string) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "read", SUBJECT, { name: ca.name });
  const now = new Date();
  return (await listCaCertificatesOf(ctx.deps.db, ca.id))
    .map((row, index) => ({ row, version: index + 1 }))
    .filter(({ row }) => new Date(row.not_after) > now)
    .map(({ row, version }) => ({
      certificate: row.certificate_pem,
      certificateChain: row.certificate_chain_pem,
      serialNumber: row.serial_number,
      version,
      notBefore: toIso(row.not_before),
      notAfter: toIso(row.not_after),
    }));
};
