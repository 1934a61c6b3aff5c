import { randomUUID } from "node:crypto";
import type { Insertable } from "kysely";
import type {
  CertKeyAlgorithm,
  ExtendedKeyUsage,
  KeyUsage,
  ProfileDefaults,
  SignatureAlgorithm,
} from "@keyward/contract";
import type { AppDeps } from "../../context";
import type { Database } from "../../db/database";
import type { PkiCertificatesTable } from "../../db/tables/pki";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { findCaSigningMaterial, type CaSigningRow } from "./ca.repository";
import { signerOfCa } from "./ca.service";
import { ocspUrlOf } from "./ocsp/ocsp-url";
import { joinPem } from "./pki-access";
import type { ProfileRow } from "./profile.repository";
import {
  buildName,
  defaultSignatureAlgorithm,
  generateKeyPair,
  keyFamilyOf,
  randomSerialNumber,
  signCertificate,
  signatureFamilyOf,
  type Signer,
  x509,
} from "./x509";

export const DAY_MS = 24 * 3600 * 1000;
/** Lifetime when neither the request nor the profile names one. */
export const DEFAULT_TTL_MS = 90 * DAY_MS;

export const defaultsOf = (profile: Pick<ProfileRow, "defaults">) => (profile.defaults as ProfileDefaults | null) ?? {};

/** The profile's CA, checked usable now; undefined for a self-signed profile. */
export const loadIssuingCa = async (db: Database, profile: ProfileRow, now: Date) => {
  if (profile.issuer_type !== "ca" || !profile.ca_id) return undefined;
  const ca = await findCaSigningMaterial(db, profile.ca_id);
  if (!ca) throw new BadRequestError(`The CA of profile ${profile.slug} no longer exists`);
  if (ca.status !== "active") throw new BadRequestError(`The CA ${ca.name} is disabled`);
  if (new Date(ca.not_after) <= now) throw new BadRequestError(`The CA ${ca.name} has expired`);
  if (new Date(ca.not_before) > now)
    throw new BadRequestError(`The CA ${ca.name} is not valid before ${toIso(ca.not_before)}`);
  return ca;
};

/** The end of a certificate living `ttlMs` from `now`: within the profile's limit and never past the CA's end. */
export const notAfterFor = (
  ttlMs: number | undefined,
  defaults: ProfileDefaults,
  ca: CaSigningRow | undefined,
  now: Date,
) => {
  const limit = defaults.ttlDays ? defaults.ttlDays * DAY_MS : undefined;
  const ttl = ttlMs ?? limit ?? DEFAULT_TTL_MS;
  if (limit !== undefined && ttl > limit) {
    throw new BadRequestError(`The requested TTL exceeds the profile's maximum of ${defaults.ttlDays} days`);
  }
  const notAfter = new Date(now.getTime() + ttl);
  if (ca && notAfter > new Date(ca.not_after)) {
    throw new BadRequestError(
      `The requested TTL would outlive the CA ${ca.name}, which expires at ${toIso(ca.not_after)}`,
    );
  }
  return notAfter;
};

export type AltName = { type: string; value: string };

/** The key usages a certificate gets when the request names none. */
export const defaultKeyUsages = (defaults: ProfileDefaults, keyAlgorithm: CertKeyAlgorithm): KeyUsage[] =>
  defaults.keyUsages ??
  (keyFamilyOf(keyAlgorithm) === "RSA" ? ["digital_signature", "key_encipherment"] : ["digital_signature"]);

/** Drop self-signed certificates (roots) from a PEM chain, for clients that hold the root already. */
export const withoutRoots = (chain: string) =>
  x509.PemConverter.decode(chain)
    .map((der) => new x509.X509Certificate(der))
    .filter((cert) => cert.subject !== cert.issuer)
    .map((cert) => cert.toString("pem"))
    .join("\n");

export type IssueInput = {
  profile: ProfileRow;
  ca: CaSigningRow | undefined;
  commonName: string;
  altNames: AltName[];
  keyAlgorithm: CertKeyAlgorithm;
  /** Asked for by the request, already checked against the profile; otherwise the profile's defaults apply. */
  signatureAlgorithm?: SignatureAlgorithm;
  keyUsages?: KeyUsage[];
  extendedKeyUsages?: ExtendedKeyUsage[];
  /** The subject's key (from a CSR or the certificate being renewed); without it a key pair is generated. */
  publicKey?: x509.PublicKey;
  notBefore: Date;
  notAfter: Date;
  friendlyName: string;
  /** Keep an encrypted copy of a generated key. */
  storeKey: boolean;
  renewedFromId?: string;
};

export type PreparedCertificate = {
  id: string;
  values: Insertable<PkiCertificatesTable>;
  certificate: string;
  issuingCaCertificate: string;
  certificateChain: string;
  serialNumber: string;
  /** Only when Keyward generated the key. */
  privateKey?: string;
};

/**
 * Sign a certificate under a profile's rules (subject defaults, usages, signature, extensions) and
 * return the row to insert. Pure CPU work: callers insert inside their own transaction.
 */
export const prepareCertificate = async (deps: AppDeps, input: IssueInput): Promise<PreparedCertificate> => {
  const { profile, ca, keyAlgorithm } = input;
  const defaults = defaultsOf(profile);
  const signerKey = (ca?.key_algorithm as CertKeyAlgorithm | undefined) ?? keyAlgorithm;
  const signatureAlgorithm: SignatureAlgorithm =
    input.signatureAlgorithm ?? defaults.signatureAlgorithm ?? defaultSignatureAlgorithm(signerKey);
  if (signatureFamilyOf(signatureAlgorithm) !== keyFamilyOf(signerKey)) {
    throw new BadRequestError(`Signature algorithm ${signatureAlgorithm} cannot be made with a ${signerKey} key`);
  }
  if (!ca && input.publicKey) {
    throw new BadRequestError(
      "A self-signed certificate cannot be issued for a CSR: it is signed with the subject's own key",
    );
  }
  const keyUsages = input.keyUsages ?? defaultKeyUsages(defaults, keyAlgorithm);
  const extendedKeyUsages = input.extendedKeyUsages ?? defaults.extendedKeyUsages ?? [];
  const subject = buildName({
    commonName: input.commonName,
    organization: defaults.organization,
    organizationalUnit: defaults.organizationalUnit,
    country: defaults.country,
    state: defaults.state,
    locality: defaults.locality,
    domainComponents: defaults.domainComponents,
  });
  const generated = input.publicKey ? undefined : await generateKeyPair(keyAlgorithm);
  const signer: Signer = ca
    ? signerOfCa({ deps }, ca)
    : { privateKeyPem: generated!.privateKeyPem, keyAlgorithm, name: subject };
  const serialNumber = randomSerialNumber();
  const certificate = await signCertificate(
    {
      serialNumber,
      subject,
      publicKey: input.publicKey ?? generated!.publicKey,
      notBefore: input.notBefore,
      notAfter: input.notAfter,
      signatureAlgorithm,
      basicConstraints: defaults.basicConstraints ?? { isCA: false },
      keyUsages,
      extendedKeyUsages,
      altNames: input.altNames,
      customExtensions: defaults.customExtensions,
      ocspUrl: ca ? ocspUrlOf(deps.env, ca.id) : undefined,
    },
    signer,
  );
  const certificatePem = certificate.toString("pem");
  const id = randomUUID();
  const issuingCaCertificate = ca ? ca.certificate_pem : certificatePem;
  const certificateChain = ca ? joinPem(ca.certificate_pem, ca.certificate_chain_pem) : certificatePem;
  const keepKey = Boolean(generated && input.storeKey);
  return {
    id,
    certificate: certificatePem,
    issuingCaCertificate,
    certificateChain,
    serialNumber,
    ...(generated ? { privateKey: generated.privateKeyPem } : {}),
    values: {
      id,
      project_id: profile.project_id,
      ca_id: ca?.id ?? null,
      profile_id: profile.id,
      serial_number: serialNumber,
      common_name: input.commonName,
      alt_names: input.altNames.map((n) => n.value).join(","),
      friendly_name: input.friendlyName,
      key_algorithm: keyAlgorithm,
      signature_algorithm: signatureAlgorithm,
      key_usages: JSON.stringify(keyUsages),
      extended_key_usages: JSON.stringify(extendedKeyUsages),
      not_before: certificate.notBefore,
      not_after: certificate.notAfter,
      certificate_pem: certificatePem,
      issuing_ca_certificate_pem: issuingCaCertificate,
      certificate_chain_pem: certificateChain,
      encrypted_private_key: keepKey ? deps.secretBox.encrypt(generated!.privateKeyPem, `pki-certificate:${id}`) : null,
      renewed_from_id: input.renewedFromId ?? null,
    },
  };
};

/** Whether a profile's API configuration keeps generated keys. */
export const storesPrivateKey = (settings: unknown) =>
  Boolean((settings as { storePrivateKey?: boolean } | undefined)?.storePrivateKey);
