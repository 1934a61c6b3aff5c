import { createPrivateKey, randomUUID } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate } from "@peculiar/asn1-x509";
import type { AppDeps } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import type { CaSigningRow } from "../ca.repository";
import { signerOfCa } from "../ca.service";
import { DAY_MS, loadIssuingCa } from "../issuance";
import type { ProfileRow } from "../profile.repository";
import {
  buildName,
  defaultSignatureAlgorithm,
  generateKeyPair,
  randomSerialNumber,
  signCertificate,
  x509,
} from "../x509";
import type { RaKey } from "./scep-cms";
import { deleteExpiredRas, findCurrentRa, findRaBySerial, insertRa, type RaRow } from "./scep.repository";

/** An RA certificate lives a year at most, and never past its CA. */
const RA_LIFETIME_MS = 365 * DAY_MS;
/** A new RA certificate is made when the current one has less than this left (or a third of its life). */
const RA_ROTATE_BEFORE_MS = 30 * DAY_MS;

const sealedKeyLabel = (raId: string) => `pki-scep-ra:${raId}`;

/**
 * A new RA key pair and certificate for a SCEP profile, signed by the profile's CA: RSA 2048 (the
 * clients encrypt their requests to it), key usages for signing replies and receiving content keys.
 * Pure CPU work; the row is inserted by the caller.
 */
export const issueRa = async (deps: AppDeps, profile: Pick<ProfileRow, "id" | "slug">, ca: CaSigningRow, now: Date) => {
  const key = await generateKeyPair("RSA_2048");
  const serialNumber = randomSerialNumber();
  const notAfter = new Date(Math.min(now.getTime() + RA_LIFETIME_MS, new Date(ca.not_after).getTime()));
  const signer = signerOfCa({ deps }, ca);
  const certificate = await signCertificate(
    {
      serialNumber,
      subject: buildName({ commonName: `SCEP RA ${profile.slug}`, organization: "Keyward" }),
      publicKey: key.publicKey,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter,
      signatureAlgorithm: defaultSignatureAlgorithm(signer.keyAlgorithm),
      basicConstraints: { isCA: false },
      keyUsages: ["digital_signature", "key_encipherment"],
      extendedKeyUsages: [],
      altNames: [],
    },
    signer,
  );
  const id = randomUUID();
  return {
    id,
    profile_id: profile.id,
    serial_number: serialNumber,
    certificate_pem: certificate.toString("pem"),
    encrypted_private_key: deps.secretBox.encrypt(key.privateKeyPem, sealedKeyLabel(id)),
    not_after: notAfter,
  };
};

const needsRotation = (ra: RaRow | undefined, now: Date) => {
  if (!ra) return true;
  const left = new Date(ra.not_after).getTime() - now.getTime();
  const lifetime = new Date(ra.not_after).getTime() - new x509.X509Certificate(ra.certificate_pem).notBefore.getTime();
  return left < Math.min(RA_ROTATE_BEFORE_MS, lifetime / 3);
};

/** The profile's current RA, made or rotated first when it is missing or near its end. */
export const currentRa = async (deps: AppDeps, profile: ProfileRow, now = new Date()): Promise<RaRow> => {
  const ra = await findCurrentRa(deps.db, profile.id);
  if (ra && !needsRotation(ra, now)) return ra;
  // A disabled or expired CA signs nothing: the current RA (if any) serves until it ends.
  const ca = await loadIssuingCa(deps.db, profile, now).catch((error: unknown) => {
    if (ra) return undefined;
    throw error;
  });
  if (!ca) {
    if (ra) return ra;
    throw new Error("A SCEP profile without a CA has no RA");
  }
  const fresh = await issueRa(deps, profile, ca, now);
  await inTransaction(deps.db, async (trx) => {
    await deleteExpiredRas(trx, profile.id, now);
    await insertRa(trx, fresh);
  });
  return fresh;
};

/** The RA with its private key opened, for the one request that needs it. */
export const raKeyOf = (deps: AppDeps, ra: RaRow): RaKey => ({
  certificate: AsnConvert.parse(x509.PemConverter.decode(ra.certificate_pem)[0]!, Certificate),
  privateKey: createPrivateKey(deps.secretBox.decrypt(ra.encrypted_private_key, sealedKeyLabel(ra.id))),
});

export const raBySerial = (deps: AppDeps, profileId: string, serialNumber: string) =>
  findRaBySerial(deps.db, profileId, serialNumber);

export const raDer = (ra: RaRow) => Buffer.from(x509.PemConverter.decode(ra.certificate_pem)[0]!);
