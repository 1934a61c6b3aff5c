import { inTransaction } from "../../db/transaction";
import { randomUUID } from "node:crypto";
import type { CaConfigurationInput, CertKeyAlgorithm } from "@keyward/contract";
import { isForeignKeyViolation, isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import {
  insertCaCertificate,
  listRevokedCaCertificatesIssuedBy,
  revokeCertificatesOfCa,
} from "./ca-certificate.repository";
import { toCaDto } from "./ca.dto";
import {
  countCaDependents,
  deleteCaRow,
  findCaById,
  findCaCertificate,
  findCaSigningMaterial,
  insertCa,
  listCaKeys,
  listCasByIds,
  listRevokedOfCa,
  updateCa,
  type CaSigningRow,
} from "./ca.repository";
import { ocspUrlOf } from "./ocsp/ocsp-url";
import { joinPem, pageVisible, permissionForOwned } from "./pki-access";
import {
  buildName,
  defaultSignatureAlgorithm,
  generateKeyPair,
  randomSerialNumber,
  signCertificate,
  signCrl,
  x509,
  type Signer,
} from "./x509";
import { noteAudit, type AppDeps, type RequestContext } from "../../context";

const SUBJECT = "certificate-authorities";
const YEAR_MS = 365 * 24 * 3600 * 1000;

export const caNotFound = (caId: string) => new NotFoundError(`CA with ID '${caId}' not found`);
const duplicateName = (name: string) =>
  new BadRequestError(`A certificate authority named ${name} already exists in this project`);

/** Decrypts the CA's key for one signing operation; the ciphertext is bound to the CA id. */
export const signerOfCa = (ctx: { deps: AppDeps }, ca: CaSigningRow): Signer & { certificatePem: string } => ({
  privateKeyPem: ctx.deps.secretBox.decrypt(ca.encrypted_private_key, `pki-ca:${ca.id}`),
  keyAlgorithm: ca.key_algorithm as CertKeyAlgorithm,
  certificatePem: ca.certificate_pem,
  name: new x509.X509Certificate(ca.certificate_pem).subjectName,
});

/** A CA of the caller's organization, with the caller's ability in its project. */
export const loadCa = async (ctx: RequestContext, caId: string) => {
  const ca = isUuid(caId) ? await findCaById(ctx.deps.db, caId) : undefined;
  const permission = await permissionForOwned(ctx, ca, `CA with ID '${caId}' not found`);
  return { ca: ca!, ...permission };
};

/** The path length an intermediate gets under `parent`; a parent limited to 0 signs no CAs. */
const childPathLength = (parent: CaSigningRow, requested: number) => {
  if (parent.max_path_length === -1) return requested;
  if (parent.max_path_length === 0)
    throw new BadRequestError("The parent CA has a path length of 0 and cannot sign intermediate CAs");
  const limit = parent.max_path_length - 1;
  if (requested === -1) return limit;
  if (requested > limit) throw new BadRequestError(`maxPathLength must be at most ${limit} under this parent CA`);
  return requested;
};

const loadParent = async (ctx: RequestContext, projectId: string, parentCaId: string) => {
  const parent = isUuid(parentCaId) ? await findCaSigningMaterial(ctx.deps.db, parentCaId) : undefined;
  if (!parent || parent.project_id !== projectId) throw caNotFound(parentCaId);
  return parent;
};

export const createCa = async (
  ctx: RequestContext,
  body: { projectId: string; name: string; status: "active" | "disabled"; configuration: CaConfigurationInput },
) => {
  const { project, ability } = await getProjectPermission(ctx, body.projectId, "cert-manager");
  assertCan(ability, "create", SUBJECT, { name: body.name });
  const cfg = body.configuration;
  const parent = cfg.parentCaId ? await loadParent(ctx, project.id, cfg.parentCaId) : undefined;
  if (parent) assertCan(ability, "sign-intermediate", SUBJECT, { name: parent.name });

  const now = new Date();
  const notBefore = cfg.notBefore ? new Date(cfg.notBefore) : now;
  let notAfter = cfg.notAfter ? new Date(cfg.notAfter) : new Date(notBefore.getTime() + (parent ? 5 : 10) * YEAR_MS);
  let pathLength = cfg.maxPathLength;
  if (parent) {
    if (parent.status !== "active") throw new BadRequestError(`The parent CA ${parent.name} is disabled`);
    const parentNotBefore = new Date(parent.not_before);
    const parentNotAfter = new Date(parent.not_after);
    if (parentNotAfter <= now) throw new BadRequestError(`The parent CA ${parent.name} has expired`);
    if (!cfg.notAfter && notAfter > parentNotAfter) notAfter = parentNotAfter;
    // Clamping notAfter to the parent's end can leave it before a notBefore that starts after the parent ends.
    if (notBefore < parentNotBefore || notAfter > parentNotAfter || notBefore >= notAfter) {
      throw new BadRequestError("The validity of an intermediate CA must lie within the validity of its parent CA");
    }
    pathLength = childPathLength(parent, cfg.maxPathLength);
  }
  if (notAfter <= now) throw new BadRequestError("notAfter must be in the future");

  const id = randomUUID();
  const key = await generateKeyPair(cfg.keyAlgorithm);
  const subject = buildName({
    commonName: cfg.commonName,
    organization: cfg.organization,
    organizationalUnit: cfg.ou,
    country: cfg.country,
    state: cfg.province,
    locality: cfg.locality,
  });
  const signer: Signer = parent
    ? signerOfCa(ctx, parent)
    : { privateKeyPem: key.privateKeyPem, keyAlgorithm: cfg.keyAlgorithm, name: subject };
  const serialNumber = randomSerialNumber();
  const certificate = await signCertificate(
    {
      serialNumber,
      subject,
      publicKey: key.publicKey,
      notBefore,
      notAfter,
      signatureAlgorithm: defaultSignatureAlgorithm(signer.keyAlgorithm),
      basicConstraints: { isCA: true, pathLength: pathLength === -1 ? undefined : pathLength },
      keyUsages: ["key_cert_sign", "crl_sign", "digital_signature"],
      extendedKeyUsages: [],
      altNames: [],
      ocspUrl: parent ? ocspUrlOf(ctx.deps.env, parent.id) : undefined,
    },
    signer,
  );
  noteAudit(ctx, { metadata: { caId: id } });
  try {
    const row = await inTransaction(ctx, async (trx) => {
      const inserted = await insertCa(trx, {
        id,
        project_id: project.id,
        parent_ca_id: parent?.id ?? null,
        name: body.name,
        type: cfg.type,
        status: body.status,
        friendly_name: cfg.friendlyName ?? null,
        common_name: cfg.commonName,
        organization: cfg.organization,
        ou: cfg.ou,
        country: cfg.country.toUpperCase(),
        province: cfg.province,
        locality: cfg.locality,
        dn: subject.toString(),
        key_algorithm: cfg.keyAlgorithm,
        max_path_length: pathLength,
        serial_number: serialNumber,
        not_before: certificate.notBefore,
        not_after: certificate.notAfter,
        certificate_pem: certificate.toString("pem"),
        certificate_chain_pem: parent ? joinPem(parent.certificate_pem, parent.certificate_chain_pem) : "",
        encrypted_private_key: ctx.deps.secretBox.encrypt(key.privateKeyPem, `pki-ca:${id}`),
      });
      await insertCaCertificate(trx, {
        ca_id: id,
        issuer_ca_id: parent?.id ?? null,
        serial_number: serialNumber,
        certificate_pem: certificate.toString("pem"),
        certificate_chain_pem: parent ? joinPem(parent.certificate_pem, parent.certificate_chain_pem) : "",
        not_before: certificate.notBefore,
        not_after: certificate.notAfter,
      });
      return inserted;
    });
    return toCaDto(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName(body.name);
    if (isForeignKeyViolation(error) && parent) throw caNotFound(parent.id);
    throw error;
  }
};

export const getCa = async (ctx: RequestContext, caId: string) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "read", SUBJECT, { name: ca.name });
  return toCaDto(ca);
};

export const listCas = async (ctx: RequestContext, query: { projectId: string; offset: number; limit: number }) => {
  const { project, ability } = await getProjectPermission(ctx, query.projectId, "cert-manager");
  assertCan(ability, "read", SUBJECT);
  const keys = await listCaKeys(ctx.deps.db, project.id);
  const { page, totalCount } = pageVisible(
    keys,
    (k) => ({ name: k.name }),
    (o) => ability.can("read", SUBJECT, o),
    query.offset,
    query.limit,
  );
  const rows = new Map(
    (
      await listCasByIds(
        ctx.deps.db,
        page.map((k) => k.id),
      )
    ).map((r) => [r.id, r]),
  );
  return {
    certificateAuthorities: page.flatMap((k) => (rows.has(k.id) ? [toCaDto(rows.get(k.id)!)] : [])),
    totalCount,
  };
};

export const updateCaStatusOrName = async (
  ctx: RequestContext,
  caId: string,
  body: { name?: string; status?: "active" | "disabled" },
) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "edit", SUBJECT, { name: ca.name });
  if (body.name !== undefined && body.name !== ca.name) assertCan(ability, "edit", SUBJECT, { name: body.name });
  try {
    return toCaDto(await inTransaction(ctx, (trx) => updateCa(trx, ca.id, body)));
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName(body.name ?? ca.name);
    throw error;
  }
};

const inUse = (name: string) =>
  new BadRequestError(
    `The CA ${name} still signs intermediate CAs or issues through certificate profiles; remove those first`,
  );

export const deleteCa = async (ctx: RequestContext, caId: string) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "delete", SUBJECT, { name: ca.name });
  const dependents = await countCaDependents(ctx.deps.db, ca.id);
  if (dependents.children > 0 || dependents.profiles > 0) throw inUse(ca.name);
  try {
    await inTransaction(ctx, async (trx) => {
      await revokeCertificatesOfCa(trx, ca.id, new Date());
      await deleteCaRow(trx, ca.id);
    });
  } catch (error) {
    // A profile or intermediate created between the check and the delete.
    if (isForeignKeyViolation(error)) throw inUse(ca.name);
    throw error;
  }
  return toCaDto(ca);
};

export const getCaCertificate = async (ctx: RequestContext, caId: string) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "read", SUBJECT, { name: ca.name });
  const pem = await findCaCertificate(ctx.deps.db, ca.id);
  return {
    certificate: pem.certificate_pem,
    certificateChain: pem.certificate_chain_pem,
    serialNumber: pem.serial_number,
  };
};

export const getCaCrl = async (ctx: RequestContext, caId: string) => {
  const { ca, ability } = await loadCa(ctx, caId);
  assertCan(ability, "read", SUBJECT, { name: ca.name });
  const material = await findCaSigningMaterial(ctx.deps.db, ca.id);
  if (!material) throw caNotFound(caId);
  const revoked = [
    ...(await listRevokedOfCa(ctx.deps.db, ca.id)),
    ...(await listRevokedCaCertificatesIssuedBy(ctx.deps.db, ca.id)),
  ];
  const crl = await signCrl(
    signerOfCa(ctx, material),
    revoked.map((r) => ({
      serialNumber: r.serial_number,
      revokedAt: new Date(r.revoked_at ?? Date.now()),
      reason: r.revocation_reason ?? "UNSPECIFIED",
    })),
  );
  return { crl };
};
