import type { CertKeyAlgorithm } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { hashToken, verifyPassword } from "../../../crypto/tokens";
import { inTransaction, type Tx } from "../../../db/transaction";
import { AppError } from "../../../errors";
import { recordProtocolChange, scepAccountActor, type AuditOrigin } from "../../audit/audit-protocol";
import { findCaCertificate } from "../ca.repository";
import { renewFromSource } from "../certificate-renew.service";
import { findCertificateOfProfileBySerial, findRenewalSource, insertCertificate } from "../certificate.repository";
import type { PreparedCertificate } from "../issuance";
import { joinPem } from "../pki-access";
import type { ProfileRow } from "../profile.repository";
import { csrTextIsWellFormed, keyAlgorithmOfPublicKey, nameAttribute, x509 } from "../x509";
import { altNamesOfCsr, prepareForCsr, type Refuse } from "../csr-issue";
import { ScepFailure } from "./scep-cms";
import { consumeChallenge } from "./scep.repository";

export type ScepProfile = {
  profile: ProfileRow;
  orgId: string;
  challengeType: "static" | "dynamic";
  /** The static challenge's scrypt hash. */
  staticChallengeHash: string | undefined;
  includeCaCertInResponse: boolean;
  allowCertBasedRenewal: boolean;
  dynamicChallengeExpiryMinutes: number;
  dynamicChallengeMaxPending: number;
};

const CHALLENGE_PASSWORD = "1.2.840.113549.1.9.7";

/** A PKCS#10 request from an envelope, checked: signature, text, key kind. */
export const readCsr = async (der: Buffer) => {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch {
    throw new ScepFailure("badMessageCheck", "The envelope does not hold a PKCS#10 request");
  }
  if (!(await csr.verify().catch(() => false))) {
    throw new ScepFailure("badMessageCheck", "The CSR's signature does not verify");
  }
  if (!csrTextIsWellFormed(csr)) throw new ScepFailure("badRequest", "The CSR's text is not well-formed Unicode");
  const keyAlgorithm: CertKeyAlgorithm | undefined = keyAlgorithmOfPublicKey(csr.publicKey);
  if (!keyAlgorithm)
    throw new ScepFailure("badAlg", "The CSR's key must be RSA 2048/3072/4096 or EC P-256/P-384/P-521");
  const attribute = csr.getAttribute(CHALLENGE_PASSWORD);
  const challenge = attribute ? new x509.ChallengePasswordAttribute(attribute.rawData).password : undefined;
  return { csr, keyAlgorithm, challenge };
};

const scepRefusal: Refuse = (message) => new ScepFailure("badRequest", message);

/** The profile's or CA's refusals (policy, lifetime, a disabled CA) are the request's: badRequest. */
const asFailure = (error: unknown) =>
  error instanceof AppError && error.statusCode < 500 ? new ScepFailure("badRequest", error.message) : error;

const recordScep = (
  trx: Tx,
  deps: AppDeps,
  scep: ScepProfile,
  origin: AuditOrigin,
  type: string,
  metadata: Record<string, unknown>,
) =>
  recordProtocolChange(trx, deps, {
    orgId: scep.orgId,
    projectId: scep.profile.project_id,
    actor: scepAccountActor(scep.profile.id),
    type,
    metadata: { profileId: scep.profile.id, ...metadata },
    origin,
  });

/** The certificates a successful reply carries: the new one, and the CA chain when the profile says so. */
export const replyCertificates = async (deps: AppDeps, scep: ScepProfile, pem: string) => {
  const out = [Buffer.from(x509.PemConverter.decode(pem)[0]!)];
  if (scep.includeCaCertInResponse && scep.profile.ca_id) {
    const ca = await findCaCertificate(deps.db, scep.profile.ca_id);
    for (const der of x509.PemConverter.decode(joinPem(ca.certificate_pem, ca.certificate_chain_pem))) {
      out.push(Buffer.from(der));
    }
  }
  return out;
};

/** Check a challenge before any work: a static one against its hash; a dynamic one is spent at issuance. */
const checkStaticChallenge = async (scep: ScepProfile, challenge: string | undefined) => {
  if (!challenge) throw new ScepFailure("badRequest", "The CSR carries no challenge password");
  if (scep.challengeType !== "static") return;
  if (!scep.staticChallengeHash || !(await verifyPassword(challenge, scep.staticChallengeHash))) {
    throw new ScepFailure("badRequest", "The challenge password is wrong");
  }
};

/** PKCSReq: a certificate for the CSR under the profile's policy, with a valid challenge password. */
export const enrol = async (deps: AppDeps, scep: ScepProfile, csrDer: Buffer, origin: AuditOrigin) => {
  const { csr, keyAlgorithm, challenge } = await readCsr(csrDer);
  await checkStaticChallenge(scep, challenge);
  const now = new Date(deps.clock.now());
  const { prepared, commonName } = await prepareForCsr(
    deps,
    scep.profile,
    { csr, keyAlgorithm, now },
    scepRefusal,
  ).catch((error: unknown) => {
    throw asFailure(error);
  });
  await inTransaction(deps.db, async (trx) => {
    // A dynamic challenge is spent with the issuance: a refused request leaves it pending.
    if (
      scep.challengeType === "dynamic" &&
      !(await consumeChallenge(trx, scep.profile.id, hashToken(challenge!), now))
    ) {
      throw new ScepFailure("badRequest", "The challenge password is unknown, expired or already used");
    }
    await insertCertificate(trx, prepared.values);
    await recordScep(trx, deps, scep, origin, "scep-enrollment", {
      certificateId: prepared.id,
      serialNumber: prepared.serialNumber,
      commonName,
      challengeType: scep.challengeType,
    });
  });
  return prepared.certificate;
};

/**
 * Whether a PKCSReq is signed with a certificate this profile issued (not the client's self-signed
 * one): such a request renews that certificate, as clients that predate RenewalReq ask for renewal.
 */
export const signedByIssuedCertificate = async (deps: AppDeps, scep: ScepProfile, signerDer: Buffer) => {
  const signer = new x509.X509Certificate(signerDer);
  if (signer.subject === signer.issuer) return false;
  const row = await findCertificateOfProfileBySerial(deps.db, scep.profile.id, signer.serialNumber.toLowerCase());
  return Boolean(row && new x509.X509Certificate(row.certificate_pem).equal(signer));
};

/**
 * RenewalReq (or a PKCSReq signed with an issued certificate): signed with a certificate this profile issued (active, unexpired, signed by its CA),
 * for a new key with the same subject and names; the new certificate is linked to the old one.
 */
export const renew = async (
  deps: AppDeps,
  scep: ScepProfile,
  signerDer: Buffer,
  csrDer: Buffer,
  origin: AuditOrigin,
) => {
  if (!scep.allowCertBasedRenewal) throw new ScepFailure("badRequest", "This profile does not allow renewal");
  const { csr, keyAlgorithm } = await readCsr(csrDer);
  const now = new Date(deps.clock.now());
  const current = new x509.X509Certificate(signerDer);
  const row = await findCertificateOfProfileBySerial(deps.db, scep.profile.id, current.serialNumber.toLowerCase());
  const ca = new x509.X509Certificate((await findCaCertificate(deps.db, scep.profile.ca_id!)).certificate_pem);
  if (
    !row ||
    row.status !== "active" ||
    !new x509.X509Certificate(row.certificate_pem).equal(current) ||
    !(await current.verify({ publicKey: ca.publicKey, signatureOnly: true }).catch(() => false))
  ) {
    throw new ScepFailure("badCertId", "The signing certificate is not an active certificate of this profile");
  }
  if (current.notAfter <= now || current.notBefore > now) {
    throw new ScepFailure("badTime", "The signing certificate is not valid now");
  }
  const source = await findRenewalSource(deps.db, row.id);
  if (!source) throw new ScepFailure("badCertId", "The signing certificate is unknown");
  // The renewed certificate keeps the old one's subject and names; the CSR may not ask for others.
  const oldNames = new Set((source.alt_names ? source.alt_names.split(",") : []).map((n) => n.toLowerCase()));
  const commonName = nameAttribute(csr.subjectName, "CN");
  if (
    (commonName !== undefined && commonName !== source.common_name) ||
    !altNamesOfCsr(csr, scepRefusal).every((n) => oldNames.has(n.value.toLowerCase()))
  ) {
    throw new ScepFailure("badRequest", "A renewal CSR must keep the subject and alternative names of the certificate");
  }
  try {
    const record = (trx: Tx, renewed: PreparedCertificate) =>
      recordScep(trx, deps, scep, origin, "scep-renewal", {
        certificateId: renewed.id,
        serialNumber: renewed.serialNumber,
        commonName: source.common_name,
        renewedFromCertificateId: source.id,
        renewedFromSerialNumber: current.serialNumber.toLowerCase(),
      });
    return (await renewFromSource({ deps }, source, { kind: "csr", csr, keyAlgorithm }, now, record)).certificate;
  } catch (error) {
    throw asFailure(error);
  }
};
