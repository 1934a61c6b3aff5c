import { createHash, sign, timingSafeEqual } from "node:crypto";
import {
  BasicOCSPResponse,
  CertStatus,
  KeyHash,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  type CertID,
} from "@peculiar/asn1-ocsp";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { CRLReason, CRLReasons, Certificate } from "@peculiar/asn1-x509";
import type { CertKeyAlgorithm } from "@keyward/contract";
import { CRL_REASON, defaultSignatureAlgorithm, signatureAlgorithmIdentifier, x509 } from "../x509";

/** Certificates one OCSP request may ask about; more is a malformed request. */
export const MAX_CERTS_PER_REQUEST = 10;
/** The largest OCSP request read (a signed request with its signer's chain fits comfortably). */
export const MAX_REQUEST_BYTES = 16 * 1024;
/** A nonce's value may be 1 to 32 octets; its extension value adds the OCTET STRING's tag and length. */
const MAX_NONCE_EXTENSION_BYTES = 34;

/** The hashes a CertID may name its issuer with: SHA-1 (most clients) and the SHA-2 family. */
const CERT_ID_HASHES: Record<string, string> = {
  "1.3.14.3.2.26": "sha1",
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};

/** An OCSP answer that is not a signed response: malformedRequest, unauthorized, internalError. */
export class OcspRefusal extends Error {
  constructor(readonly status: OCSPResponseStatus) {
    super(OCSPResponseStatus[status]);
  }
}

export type ParsedOcspRequest = { certIds: CertID[] };

/**
 * The CertIDs of a DER OCSPRequest; a refusal (malformedRequest) when it is not one, asks too much or
 * carries a nonce outside 1 to 32 octets. A well-formed nonce is not echoed (see `answerOcspRequest`).
 */
export const parseOcspRequest = (der: Uint8Array): ParsedOcspRequest => {
  let request: OCSPRequest;
  try {
    request = AsnConvert.parse(new Uint8Array(der), OCSPRequest);
  } catch {
    throw new OcspRefusal(OCSPResponseStatus.malformedRequest);
  }
  const list = request.tbsRequest.requestList;
  if (list.length === 0 || list.length > MAX_CERTS_PER_REQUEST)
    throw new OcspRefusal(OCSPResponseStatus.malformedRequest);
  const nonce = request.tbsRequest.requestExtensions?.find((e) => e.extnID === id_pkix_ocsp_nonce);
  if (nonce && (nonce.extnValue.byteLength === 0 || nonce.extnValue.byteLength > MAX_NONCE_EXTENSION_BYTES)) {
    throw new OcspRefusal(OCSPResponseStatus.malformedRequest);
  }
  return { certIds: list.map((r) => r.reqCert) };
};

/** What identifies a CA in a CertID: the DER of its subject and the bits of its public key. */
export type OcspIssuer = { nameDer: Buffer; keyBits: Buffer };

export const ocspIssuerOf = (certificatePem: string): OcspIssuer => {
  const cert = AsnConvert.parse(x509.PemConverter.decode(certificatePem)[0]!, Certificate);
  return {
    nameDer: Buffer.from(AsnConvert.serialize(cert.tbsCertificate.subject)),
    keyBits: Buffer.from(cert.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey),
  };
};

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

/** Whether a CertID names `issuer` (both its name hash and its key hash), under a hash Keyward knows. */
export const namesIssuer = (id: CertID, issuer: OcspIssuer) => {
  const hash = CERT_ID_HASHES[id.hashAlgorithm.algorithm];
  if (!hash) return false;
  return (
    sameBytes(createHash(hash).update(issuer.nameDer).digest(), Buffer.from(id.issuerNameHash.buffer)) &&
    sameBytes(createHash(hash).update(issuer.keyBits).digest(), Buffer.from(id.issuerKeyHash.buffer))
  );
};

/** A CertID's serial as Keyward stores serials (lower-case hex, no leading zero byte); undefined when negative or empty. */
export const serialHexOf = (id: CertID) => {
  const bytes = Buffer.from(id.serialNumber);
  if (bytes.length === 0 || bytes[0]! & 0x80) return undefined;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return bytes.subarray(start).toString("hex");
};

export type CertAnswer =
  | { certId: CertID; status: "good" }
  | { certId: CertID; status: "unknown" }
  | { certId: CertID; status: "revoked"; revokedAt: Date; reason: string | null };

const certStatusOf = (answer: CertAnswer) => {
  if (answer.status === "good") return new CertStatus({ good: null });
  if (answer.status === "unknown") return new CertStatus({ unknown: null });
  return new CertStatus({
    revoked: new RevokedInfo({
      revocationTime: answer.revokedAt,
      revocationReason: new CRLReason(CRL_REASON[answer.reason ?? ""] ?? CRLReasons.unspecified),
    }),
  });
};

const derOf = (response: OCSPResponse) => Buffer.from(AsnConvert.serialize(response));

/** An OCSPResponse carrying only an error status. */
export const ocspErrorResponse = (status: OCSPResponseStatus) => derOf(new OCSPResponse({ responseStatus: status }));

export type OcspSigner = { privateKeyPem: string; keyAlgorithm: CertKeyAlgorithm; keyBits: Buffer };

/**
 * A successful OCSPResponse: a BasicOCSPResponse signed by the CA's own key, its responder named by
 * the SHA-1 of that key, every answer current from `thisUpdate` to `nextUpdate`. It carries no
 * extension, so the same answer serves every client asking the same question.
 */
export const signedOcspResponse = (
  signer: OcspSigner,
  answers: CertAnswer[],
  times: { producedAt: Date; thisUpdate: Date; nextUpdate: Date },
) => {
  const data = new ResponseData({
    responderID: new ResponderID({ byKey: new KeyHash(createHash("sha1").update(signer.keyBits).digest()) }),
    producedAt: times.producedAt,
    responses: answers.map(
      (answer) =>
        new SingleResponse({
          certID: answer.certId,
          certStatus: certStatusOf(answer),
          thisUpdate: times.thisUpdate,
          nextUpdate: times.nextUpdate,
        }),
    ),
  });
  const sig = defaultSignatureAlgorithm(signer.keyAlgorithm);
  const signature = sign(`sha${sig.slice(-3)}`, Buffer.from(AsnConvert.serialize(data)), {
    key: signer.privateKeyPem,
    dsaEncoding: "der",
  });
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: signatureAlgorithmIdentifier(sig),
    signature: new Uint8Array(signature).buffer,
  });
  return derOf(
    new OCSPResponse({
      responseStatus: OCSPResponseStatus.successful,
      responseBytes: new ResponseBytes({
        responseType: id_pkix_ocsp_basic,
        response: new OctetString(AsnConvert.serialize(basic)),
      }),
    }),
  );
};
