import { createHash } from "node:crypto";
import { OCSPResponseStatus } from "@peculiar/asn1-ocsp";
import { AsnConvert } from "@peculiar/asn1-schema";
import type { CertKeyAlgorithm } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { isUuid } from "../../../db/errors";
import { listCaCertificateStatusesIssuedBy } from "../ca-certificate.repository";
import { findCaSigningMaterial } from "../ca.repository";
import { listCertificateStatusesOfCa } from "../certificate.repository";
import { OCSP_ANSWER_TTL_MS } from "../pki.state";
import { CRL_LIFETIME_MS } from "../x509";
import {
  OcspRefusal,
  namesIssuer,
  ocspErrorResponse,
  ocspIssuerOf,
  parseOcspRequest,
  serialHexOf,
  signedOcspResponse,
  type CertAnswer,
} from "./ocsp-der";

type Status = { revokedAt: Date | null; reason: string | null };

/** Serials as Keyward writes them are 128 bits; anything far longer is not one of ours. */
const MAX_SERIAL_HEX = 64;

/** What the CA's records say about each serial: present (revoked or not) or absent. */
const statusesOf = async (deps: AppDeps, caId: string, serials: string[]) => {
  const [certificates, caCertificates] = await Promise.all([
    listCertificateStatusesOfCa(deps.db, caId, serials),
    listCaCertificateStatusesIssuedBy(deps.db, caId, serials),
  ]);
  const found = new Map<string, Status>();
  for (const row of certificates) {
    found.set(row.serial_number, {
      // A revoked row always has its time; were it missing, the CRL would say "now" too.
      revokedAt: row.status === "revoked" ? new Date(row.revoked_at ?? deps.clock.now()) : null,
      reason: row.revocation_reason,
    });
  }
  for (const row of caCertificates) {
    found.set(row.serial_number, {
      revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
      reason: row.revocation_reason,
    });
  }
  return found;
};

/** Whole seconds: GeneralizedTime in OCSP carries no fraction. */
const toSecond = (ms: number) => new Date(Math.floor(ms / 1000) * 1000);

/**
 * What a signed answer says, as a cache key: the CA, each CertID as asked (its DER is echoed in the
 * answer) and the status read for it. A revocation changes the status read, so it changes the key.
 */
const answerKeyOf = (caId: string, answers: CertAnswer[]) => {
  const hash = createHash("sha256").update(caId);
  for (const answer of answers) {
    hash.update("\n").update(new Uint8Array(AsnConvert.serialize(answer.certId)));
    hash.update(
      answer.status === "revoked" ? ` r ${answer.revokedAt.getTime()} ${answer.reason ?? ""}` : ` ${answer.status}`,
    );
  }
  return hash.digest("base64url");
};

/**
 * The DER OCSPResponse a CA's responder gives to a DER OCSPRequest. Every outcome is an
 * OCSPResponse: malformedRequest for what is not a bounded OCSP request, unauthorized when the CA
 * does not exist or a CertID names another issuer, otherwise one signed answer per CertID (good,
 * revoked with its time and reason, or unknown) read from the database at this moment, so a
 * revocation shows at once. thisUpdate and nextUpdate are those of a CRL the CA would sign at
 * producedAt.
 *
 * Only the signing is cached: the same statuses asked about again within `OCSP_ANSWER_TTL_MS` get the
 * same signed bytes (the statuses are read every time and are part of the key). A request's nonce is
 * therefore not echoed: an answer is the same for every client that asks the same question, as a
 * pre-produced OCSP answer is (the protocol lets a responder leave the nonce out, and clients accept
 * an answer without one). Echoing it would make every request with a fresh nonce a new signature.
 */
export const answerOcspRequest = async (deps: AppDeps, caId: string, der: Uint8Array): Promise<Buffer> => {
  try {
    const request = parseOcspRequest(der);
    const ca = isUuid(caId) ? await findCaSigningMaterial(deps.db, caId) : undefined;
    if (!ca) throw new OcspRefusal(OCSPResponseStatus.unauthorized);
    const issuer = ocspIssuerOf(ca.certificate_pem);
    if (!request.certIds.every((id) => namesIssuer(id, issuer))) throw new OcspRefusal(OCSPResponseStatus.unauthorized);
    const serials = request.certIds.map((id) => {
      const hex = serialHexOf(id);
      return hex && hex.length <= MAX_SERIAL_HEX ? hex : undefined;
    });
    const found = await statusesOf(
      deps,
      ca.id,
      serials.filter((s): s is string => s !== undefined),
    );
    const answers = request.certIds.map((certId, i): CertAnswer => {
      const status = serials[i] === undefined ? undefined : found.get(serials[i]);
      if (!status) return { certId, status: "unknown" };
      if (!status.revokedAt) return { certId, status: "good" };
      return { certId, status: "revoked", revokedAt: toSecond(status.revokedAt.getTime()), reason: status.reason };
    });
    const key = answerKeyOf(ca.id, answers);
    const cached = deps.ocspAnswers.get(key);
    if (cached) return cached;
    // After the read: the statuses are known to be correct at this time.
    const now = toSecond(deps.clock.now());
    const nextUpdate = new Date(now.getTime() + CRL_LIFETIME_MS);
    const signed = signedOcspResponse(
      {
        privateKeyPem: deps.secretBox.decrypt(ca.encrypted_private_key, `pki-ca:${ca.id}`),
        keyAlgorithm: ca.key_algorithm as CertKeyAlgorithm,
        keyBits: issuer.keyBits,
      },
      answers,
      { producedAt: now, thisUpdate: now, nextUpdate },
    );
    deps.ocspAnswers.set(key, signed, Math.min(OCSP_ANSWER_TTL_MS, nextUpdate.getTime() - now.getTime()));
    return signed;
  } catch (error) {
    if (error instanceof OcspRefusal) return ocspErrorResponse(error.status);
    deps.logger.error({ err: error }, "OCSP request failed");
    return ocspErrorResponse(OCSPResponseStatus.internalError);
  }
};

/** The answer to a request that could not be read at all (bad base64, too large). */
export const malformedOcspResponse = () => ocspErrorResponse(OCSPResponseStatus.malformedRequest);
