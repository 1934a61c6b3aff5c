import { createHash, timingSafeEqual } from "node:crypto";
import { classifyAltName, type CertKeyAlgorithm } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { isUuid } from "../../../db/errors";
import { inTransaction, type Tx } from "../../../db/transaction";
import { estAccountActor, recordProtocolChange, type AuditOrigin } from "../../audit/audit-protocol";
import { AppError } from "../../../errors";
import { findCaCertificate } from "../ca.repository";
import { renewFromSource } from "../certificate-renew.service";
import { findCertificateOfProfileBySerial, findRenewalSource, insertCertificate } from "../certificate.repository";
import type { PreparedCertificate } from "../issuance";
import { joinPem } from "../pki-access";
import { findConfigSecret, findProfileById, type ProfileRow } from "../profile.repository";
import { altNamesOfCsr, prepareForCsr, type Refuse } from "../csr-issue";
import { csrTextIsWellFormed, keyAlgorithmOfPublicKey, x509 } from "../x509";

/** An EST failure: the HTTP status and a short plain-text reason (RFC 7030 §4.2.3). */
export class EstError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type EstProfile = {
  profile: ProfileRow;
  orgId: string;
  passphrase: string | undefined;
  caChain: x509.X509Certificate[];
  disableBootstrapCaValidation: boolean;
};

export const loadEstProfile = async (deps: AppDeps, profileId: string): Promise<EstProfile> => {
  const found = isUuid(profileId) ? await findProfileById(deps.db, profileId) : undefined;
  if (!found || found.enrollment_type !== "est" || !found.ca_id) throw new EstError(404, "No EST profile here");
  const { org_id: orgId, ...profile } = found;
  const config = await findConfigSecret(deps.db, profile.id, "est");
  const settings = config?.settings ?? {};
  const chain = typeof settings.caChain === "string" ? settings.caChain : "";
  return {
    profile,
    orgId,
    passphrase: config?.encrypted_secret
      ? deps.secretBox.decrypt(config.encrypted_secret, `pki-enrollment:${config.id}`)
      : undefined,
    caChain: chain ? x509.PemConverter.decode(chain).map((der) => new x509.X509Certificate(der)) : [],
    disableBootstrapCaValidation: Boolean(settings.disableBootstrapCaValidation),
  };
};

const digest = (value: string) => createHash("sha256").update(value).digest();

/** HTTP Basic with the profile's passphrase as password (the user name is not checked). */
export const passphraseMatches = (est: EstProfile, authorization: string | undefined) => {
  if (!est.passphrase || !authorization?.startsWith("Basic ")) return false;
  const decoded = Buffer.from(authorization.slice(6), "base64").toString("utf8");
  const password = decoded.slice(decoded.indexOf(":") + 1);
  return decoded.includes(":") && timingSafeEqual(digest(password), digest(est.passphrase));
};

const signedBy = async (certificate: x509.X509Certificate, issuer: x509.X509Certificate, now: Date) =>
  certificate.issuer === issuer.subject &&
  (await certificate.verify({ publicKey: issuer.publicKey, date: now }).catch(() => false));

/** A bootstrap client certificate (e.g. a device's factory identity) signed by a certificate of caChain. */
export const fromBootstrapChain = async (est: EstProfile, certificate: x509.X509Certificate, now = new Date()) => {
  for (const ca of est.caChain) if (await signedBy(certificate, ca, now)) return true;
  return false;
};

/** The active, unexpired certificate this profile issued that the client presents, or undefined. */
export const issuedByProfile = async (deps: AppDeps, est: EstProfile, certificate: x509.X509Certificate) => {
  const now = new Date();
  const row = await findCertificateOfProfileBySerial(deps.db, est.profile.id, certificate.serialNumber.toLowerCase());
  if (!row || row.status !== "active" || !new x509.X509Certificate(row.certificate_pem).equal(certificate)) return;
  if (certificate.notAfter <= now || certificate.notBefore > now) return;
  const ca = new x509.X509Certificate((await findCaCertificate(deps.db, est.profile.ca_id!)).certificate_pem);
  return (await signedBy(certificate, ca, now)) ? row : undefined;
};

const parseCsr = async (body: string) => {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(Buffer.from(body.replace(/\s+/g, ""), "base64"));
  } catch {
    throw new EstError(400, "The body is not a base64 PKCS#10 request");
  }
  if (!(await csr.verify().catch(() => false))) throw new EstError(400, "The CSR's signature does not verify");
  if (!csrTextIsWellFormed(csr)) {
    throw new EstError(400, "The CSR's subject or alternative names are not well-formed Unicode text");
  }
  const keyAlgorithm: CertKeyAlgorithm | undefined = keyAlgorithmOfPublicKey(csr.publicKey);
  if (!keyAlgorithm) throw new EstError(400, "The CSR's key must be RSA 2048/3072/4096 or EC P-256/P-384/P-521");
  return { csr, keyAlgorithm };
};

const estRefusal: Refuse = (message) => new EstError(400, message);

/** Errors of the profile or its CA (disabled, expired, lifetime) are the server's to fix: 400 with the reason. */
const asEstError = (error: unknown) =>
  error instanceof AppError && error.statusCode < 500 ? new EstError(400, error.message) : error;

/** How the client of an enrollment proved it may enroll (recorded in the event, never the proof itself). */
export type EstAuthentication = "issued-certificate" | "passphrase" | "passphrase-and-bootstrap-certificate";

/** An EST change's event (actor: the profile's EST client), written in the change's transaction. */
const recordEst = (
  trx: Tx,
  deps: AppDeps,
  est: EstProfile,
  origin: AuditOrigin,
  type: string,
  metadata: Record<string, unknown>,
) =>
  recordProtocolChange(trx, deps, {
    orgId: est.orgId,
    projectId: est.profile.project_id,
    actor: estAccountActor(est.profile.id),
    type,
    metadata: { profileId: est.profile.id, ...metadata },
    origin,
  });

/** RFC 7030 §4.2.1: a certificate for the CSR under the profile's policy; the PEM of the certificate. */
export const simpleEnroll = async (
  deps: AppDeps,
  est: EstProfile,
  body: string,
  request: { origin: AuditOrigin; authentication: EstAuthentication },
) => {
  const { csr, keyAlgorithm } = await parseCsr(body);
  try {
    const { prepared, commonName } = await prepareForCsr(
      deps,
      est.profile,
      { csr, keyAlgorithm, now: new Date(deps.clock.now()) },
      estRefusal,
    );
    await inTransaction(deps.db, async (trx) => {
      await insertCertificate(trx, prepared.values);
      await recordEst(trx, deps, est, request.origin, "est-enrollment", {
        certificateId: prepared.id,
        serialNumber: prepared.serialNumber,
        commonName,
        authentication: request.authentication,
      });
    });
    return prepared.certificate;
  } catch (error) {
    throw asEstError(error);
  }
};

const sameNames = (a: string[], b: string[]) => {
  const left = new Set(a.map((v) => v.toLowerCase()));
  return left.size === new Set(b.map((v) => v.toLowerCase())).size && b.every((v) => left.has(v.toLowerCase()));
};

/**
 * RFC 7030 §4.2.2: the client renews the certificate it authenticates with. The CSR keeps its
 * subject and names; the new certificate is linked to the old one as its renewal.
 */
export const simpleReenroll = async (
  deps: AppDeps,
  est: EstProfile,
  current: { id: string },
  body: string,
  origin: AuditOrigin,
) => {
  const { csr, keyAlgorithm } = await parseCsr(body);
  const source = await findRenewalSource(deps.db, current.id);
  if (!source) throw new EstError(401, "The client certificate is unknown");
  const old = new x509.X509Certificate(source.certificate_pem);
  const oldNames = (source.alt_names ? source.alt_names.split(",") : []).filter((n) => classifyAltName(n));
  if (
    csr.subject !== old.subject ||
    !sameNames(
      altNamesOfCsr(csr, estRefusal).map((n) => n.value),
      oldNames,
    )
  ) {
    throw new EstError(400, "A re-enrollment CSR must keep the subject and alternative names of the certificate");
  }
  try {
    const record = (trx: Tx, renewed: PreparedCertificate) =>
      recordEst(trx, deps, est, origin, "est-renewal", {
        certificateId: renewed.id,
        serialNumber: renewed.serialNumber,
        commonName: source.common_name,
        renewedFromCertificateId: source.id,
        renewedFromSerialNumber: old.serialNumber.toLowerCase(),
      });
    return (await renewFromSource({ deps }, source, { kind: "csr", csr, keyAlgorithm }, new Date(), record))
      .certificate;
  } catch (error) {
    throw asEstError(error);
  }
};

/** The CA certificate and the chain above it (RFC 7030 §4.1). */
export const caCertificates = async (deps: AppDeps, est: EstProfile) => {
  const ca = await findCaCertificate(deps.db, est.profile.ca_id!);
  return x509.PemConverter.decode(joinPem(ca.certificate_pem, ca.certificate_chain_pem)).map(
    (der) => new x509.X509Certificate(der),
  );
};

/** A PKCS#7 certs-only message, base64, as EST answers. */
export const certsOnly = (certificates: x509.X509Certificate[]) =>
  new x509.X509Certificates(certificates).export("base64");
