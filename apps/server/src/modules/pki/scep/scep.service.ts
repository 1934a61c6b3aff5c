import type { AppDeps } from "../../../context";
import { isUuid } from "../../../db/errors";
import type { AuditOrigin } from "../../audit/audit-protocol";
import { findCaCertificate } from "../ca.repository";
import { joinPem } from "../pki-access";
import { findConfigSecret, findProfileById } from "../profile.repository";
import { x509 } from "../x509";
import { certRep, degenerateCertificates } from "./scep-reply";
import { ScepFailure, openEnvelope, readPkiMessage, recipientSerialOf, type PkiMessage } from "./scep-cms";
import { enrol, renew, replyCertificates, signedByIssuedCertificate, type ScepProfile } from "./scep-enroll.service";
import { currentRa, raBySerial, raDer, raKeyOf } from "./scep-ra.service";

/** An answer outside SCEP: the HTTP status and a plain-text reason. */
export class ScepHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MESSAGE_TYPES = { PKCSReq: "19", RenewalReq: "17" } as const;

/** A profile with SCEP enrollment and a CA; anything else is 404 on the SCEP routes. */
export const loadScepProfile = async (deps: AppDeps, profileId: string): Promise<ScepProfile> => {
  const found = isUuid(profileId) ? await findProfileById(deps.db, profileId) : undefined;
  if (!found || found.enrollment_type !== "scep" || !found.ca_id) throw new ScepHttpError(404, "No SCEP profile here");
  const { org_id: orgId, ...profile } = found;
  const config = await findConfigSecret(deps.db, profile.id, "scep");
  const s = config?.settings ?? {};
  return {
    profile,
    orgId,
    challengeType: s.challengeType === "dynamic" ? "dynamic" : "static",
    staticChallengeHash: config?.encrypted_secret ?? undefined,
    includeCaCertInResponse: s.includeCaCertInResponse !== false,
    allowCertBasedRenewal: s.allowCertBasedRenewal !== false,
    dynamicChallengeExpiryMinutes: Number(s.dynamicChallengeExpiryMinutes ?? 60),
    dynamicChallengeMaxPending: Number(s.dynamicChallengeMaxPending ?? 100),
  };
};

/** GetCACaps (RFC 8894 §3.5.2): one capability a line. */
export const capabilities = (scep: ScepProfile) =>
  [
    "POSTPKIOperation",
    "SHA-256",
    "SHA-512",
    "AES",
    "SCEPStandard",
    ...(scep.allowCertBasedRenewal ? ["Renewal"] : []),
  ].join("\n");

/** GetCACert: the RA certificate, the CA certificate and the chain above it, as a degenerate PKCS#7. */
export const caCertificates = async (deps: AppDeps, scep: ScepProfile) => {
  const ra = await currentRa(deps, scep.profile);
  const ca = await findCaCertificate(deps.db, scep.profile.ca_id!);
  const chain = x509.PemConverter.decode(joinPem(ca.certificate_pem, ca.certificate_chain_pem)).map((der) =>
    Buffer.from(der),
  );
  return degenerateCertificates([raDer(ra), ...chain]);
};

/** The RA the envelope is addressed to (an older one while it lives), else the current one. */
const raFor = async (deps: AppDeps, scep: ScepProfile, message: PkiMessage) => {
  const serial = message.envelope ? recipientSerialOf(message.envelope) : undefined;
  const addressed = serial ? await raBySerial(deps, scep.profile.id, serial) : undefined;
  return addressed && new Date(addressed.not_after) > new Date() ? addressed : currentRa(deps, scep.profile);
};

export type PkiOperationResult = { reply: Buffer; status: "SUCCESS" | "FAILURE"; reason?: string };

/**
 * PKIOperation: a PKCSReq or RenewalReq, answered with the RA's signed CertRep. Every refusal of a
 * readable request is a FAILURE CertRep with its failInfo; only a message with no transaction to
 * answer is an HTTP 400.
 */
export const pkiOperation = async (
  deps: AppDeps,
  scep: ScepProfile,
  der: Buffer,
  origin: AuditOrigin,
): Promise<PkiOperationResult> => {
  let message: PkiMessage;
  try {
    message = readPkiMessage(der);
  } catch (error) {
    throw new ScepHttpError(400, (error as Error).message);
  }
  const ra = await raFor(deps, scep, message);
  const raKey = raKeyOf(deps, ra);
  const reply = { request: message, ra: raKey, raDer: raDer(ra) };
  try {
    if (message.problem) throw message.problem;
    if (message.messageType !== MESSAGE_TYPES.PKCSReq && message.messageType !== MESSAGE_TYPES.RenewalReq) {
      throw new ScepFailure("badRequest", `Message type ${message.messageType} is not served`);
    }
    const csr = openEnvelope(message.envelope, raKey);
    const renewal =
      message.messageType === MESSAGE_TYPES.RenewalReq ||
      (scep.allowCertBasedRenewal && (await signedByIssuedCertificate(deps, scep, message.signerDer)));
    const pem = renewal
      ? await renew(deps, scep, message.signerDer, csr, origin)
      : await enrol(deps, scep, csr, origin);
    const certificates = await replyCertificates(deps, scep, pem);
    return { reply: certRep({ ...reply, status: "SUCCESS", certificates }), status: "SUCCESS" };
  } catch (error) {
    if (!(error instanceof ScepFailure)) throw error;
    return {
      reply: certRep({ ...reply, status: "FAILURE", failInfo: error.failInfo }),
      status: "FAILURE",
      reason: `${error.failInfo}: ${error.message}`,
    };
  }
};
