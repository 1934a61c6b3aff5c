import { webcrypto } from "node:crypto";
import { importJWK } from "jose";
import type { RevocationReason } from "@keyward/contract";
import { inTransaction } from "../../../db/transaction";
import { findCertificateOfProfileBySerial, revokeCertificateRow } from "../certificate.repository";
import { x509 } from "../x509";
import type { AcmeReply } from "./acme-account.service";
import { verifyAcmeJws, type AcmeContext } from "./acme-jws";
import { AcmeProblem, malformed, unauthorized } from "./acme-problem";
import { findOrderOfCertificate } from "./acme.repository";
import { recordAcmeChange } from "./acme-audit";

/** RFC 5280 reason codes an ACME client may send (7 is unused, 8 removeFromCRL has no meaning here). */
const REASONS: Record<number, RevocationReason> = {
  0: "UNSPECIFIED",
  1: "KEY_COMPROMISE",
  2: "CA_COMPROMISE",
  3: "AFFILIATION_CHANGED",
  4: "SUPERSEDED",
  5: "CESSATION_OF_OPERATION",
  6: "CERTIFICATE_HOLD",
  9: "PRIVILEGE_WITHDRAWN",
  10: "A_A_COMPROMISE",
};

const sameKey = async (jwk: unknown, certificate: x509.X509Certificate, alg: string) => {
  try {
    const key = (await importJWK(jwk as never, alg, { extractable: true })) as webcrypto.CryptoKey;
    const spki = Buffer.from(await webcrypto.subtle.exportKey("spki", key));
    return spki.equals(Buffer.from(certificate.publicKey.rawData));
  } catch {
    return false;
  }
};

/**
 * RFC 8555 §7.6: signed by the account that ordered the certificate (kid), or by the certificate's
 * own key (jwk). Only certificates this profile issued can be revoked here.
 */
export const revokeCert = async (ctx: AcmeContext, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "either");
  const payload = (verified.payload ?? {}) as { certificate?: unknown; reason?: unknown };
  if (typeof payload.certificate !== "string" || payload.certificate.length > 65_536) {
    throw malformed("certificate must be the base64url DER certificate");
  }
  const reasonCode = payload.reason ?? 0;
  const reason = typeof reasonCode === "number" ? REASONS[reasonCode] : undefined;
  if (!reason) throw new AcmeProblem("badRevocationReason", "The revocation reason is not allowed");
  let certificate: x509.X509Certificate;
  try {
    certificate = new x509.X509Certificate(Buffer.from(payload.certificate, "base64url"));
  } catch {
    throw malformed("certificate is not a DER certificate");
  }
  const row = await findCertificateOfProfileBySerial(
    ctx.deps.db,
    ctx.profile.id,
    certificate.serialNumber.toLowerCase(),
  );
  if (!row || !new x509.X509Certificate(row.certificate_pem).equal(certificate)) {
    throw unauthorized("This profile did not issue that certificate");
  }
  if (verified.account) {
    const order = await findOrderOfCertificate(ctx.deps.db, row.id);
    if (order?.account_id !== verified.account.id) throw unauthorized("The account did not order that certificate");
  } else if (!(await sameKey(verified.jwk, certificate, verified.header.alg))) {
    throw unauthorized("The request is not signed with the certificate's key");
  }
  const revoked =
    row.status === "active"
      ? await inTransaction(ctx, async (trx) => {
          const done = await revokeCertificateRow(trx, row.id, reason, new Date());
          if (done) {
            await recordAcmeChange(trx, ctx, verified.account?.id ?? null, "revoke-acme-certificate", {
              certificateId: row.id,
              serialNumber: done.serial_number,
              revocationReason: reason,
              signedWith: verified.account ? "account-key" : "certificate-key",
            });
          }
          return done;
        })
      : undefined;
  if (!revoked) throw new AcmeProblem("alreadyRevoked", "The certificate is already revoked");
  return { status: 200, body: "" };
};
