// @peculiar/x509 resolves its algorithm providers through tsyringe, which needs the Reflect metadata API first.
import "reflect-metadata";
import { randomBytes, webcrypto } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { CRLNumber, CRLReason, CRLReasons, id_ce_cRLNumber, id_ce_cRLReasons } from "@peculiar/asn1-x509";
import * as x509 from "@peculiar/x509";
import type { CertKeyAlgorithm, SignatureAlgorithm } from "@keyward/contract";
import { isWellFormedText } from "../../http/well-formed";

type CryptoKey = webcrypto.CryptoKey;
const crypto = webcrypto;
// Node's WebCrypto, so certificate signing never depends on a global polyfill.
x509.cryptoProvider.set(crypto);

type KeyFamily = "RSA" | "EC";
const RSA = "RSASSA-PKCS1-v1_5";

const KEY_PARAMS: Record<CertKeyAlgorithm, { family: KeyFamily; bits?: number; curve?: string }> = {
  RSA_2048: { family: "RSA", bits: 2048 },
  RSA_3072: { family: "RSA", bits: 3072 },
  RSA_4096: { family: "RSA", bits: 4096 },
  EC_prime256v1: { family: "EC", curve: "P-256" },
  EC_secp384r1: { family: "EC", curve: "P-384" },
  EC_secp521r1: { family: "EC", curve: "P-521" },
};

export const keyFamilyOf = (alg: CertKeyAlgorithm): KeyFamily => KEY_PARAMS[alg].family;
export const signatureFamilyOf = (sig: SignatureAlgorithm): KeyFamily => (sig.startsWith("RSA") ? "RSA" : "EC");

/** The signature a key makes when nobody asked for one: SHA-256, or the hash that matches the curve. */
export const defaultSignatureAlgorithm = (alg: CertKeyAlgorithm): SignatureAlgorithm => {
  if (alg === "EC_secp384r1") return "ECDSA-SHA384";
  if (alg === "EC_secp521r1") return "ECDSA-SHA512";
  return keyFamilyOf(alg) === "RSA" ? "RSA-SHA256" : "ECDSA-SHA256";
};

const hashOf = (sig: SignatureAlgorithm) => `SHA-${sig.slice(-3)}`;

/** WebCrypto parameters for importing a key that will sign with `sig`; RSA keys carry their hash. */
const importParams = (alg: CertKeyAlgorithm, sig: SignatureAlgorithm) => {
  const p = KEY_PARAMS[alg];
  return p.family === "RSA" ? { name: RSA, hash: hashOf(sig) } : { name: "ECDSA", namedCurve: p.curve! };
};

const signingParams = (sig: SignatureAlgorithm) =>
  signatureFamilyOf(sig) === "RSA" ? { name: RSA, hash: hashOf(sig) } : { name: "ECDSA", hash: hashOf(sig) };

/** The AlgorithmIdentifier of a signature, for structures Keyward signs itself (OCSP responses). */
export const signatureAlgorithmIdentifier = (sig: SignatureAlgorithm) =>
  new x509.AlgorithmProvider().toAsnAlgorithm(signingParams(sig));

export type GeneratedKey = { publicKey: CryptoKey; privateKeyPem: string };

export const generateKeyPair = async (alg: CertKeyAlgorithm): Promise<GeneratedKey> => {
  const p = KEY_PARAMS[alg];
  const params =
    p.family === "RSA"
      ? { name: RSA, modulusLength: p.bits!, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }
      : { name: "ECDSA", namedCurve: p.curve! };
  const keys = await crypto.subtle.generateKey(params, true, ["sign", "verify"]);
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { publicKey: keys.publicKey, privateKeyPem: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") };
};

const importPrivateKey = (pem: string, alg: CertKeyAlgorithm, sig: SignatureAlgorithm) =>
  crypto.subtle.importKey("pkcs8", x509.PemConverter.decode(pem)[0]!, importParams(alg, sig), false, ["sign"]);

/** Our enum value for a public key, or undefined when Keyward does not issue for that kind of key. */
export const keyAlgorithmOfPublicKey = (key: x509.PublicKey): CertKeyAlgorithm | undefined => {
  const alg = key.algorithm as { name: string; modulusLength?: number; namedCurve?: string };
  for (const [name, p] of Object.entries(KEY_PARAMS) as [CertKeyAlgorithm, (typeof KEY_PARAMS)[CertKeyAlgorithm]][]) {
    if (
      p.family === "RSA" &&
      (alg.name === RSA || alg.name === "RSA-PSS" || alg.name === "RSA-OAEP") &&
      alg.modulusLength === p.bits
    )
      return name;
    if (p.family === "EC" && alg.name === "ECDSA" && alg.namedCurve === p.curve) return name;
  }
  return undefined;
};

export type SubjectInput = {
  commonName?: string;
  organization?: string;
  organizationalUnit?: string;
  country?: string;
  state?: string;
  locality?: string;
  domainComponents?: string[];
};

/**
 * A subject value as the typed ASN.1 string it is. Plain strings would be parsed: a leading `#` read
 * as hex DER (a caller could inject any ASN.1, and non-hex text threw), quotes and backslashes unescaped.
 */
const textValue = (value: string) =>
  x509.Name.isPrintableString(value) ? { printableString: value } : { utf8String: value };

/** A distinguished name from its parts, most general first; empty parts are left out. */
export const buildName = (s: SubjectInput): x509.Name => {
  const json: x509.JsonNameParams = [];
  for (const dc of s.domainComponents ?? []) json.push({ DC: [{ ia5String: dc }] });
  if (s.country) json.push({ C: [textValue(s.country.toUpperCase())] });
  if (s.state) json.push({ ST: [textValue(s.state)] });
  if (s.locality) json.push({ L: [textValue(s.locality)] });
  if (s.organization) json.push({ O: [textValue(s.organization)] });
  if (s.organizationalUnit) json.push({ OU: [textValue(s.organizationalUnit)] });
  if (s.commonName) json.push({ CN: [textValue(s.commonName)] });
  return new x509.Name(json);
};

/** 128 random bits, positive and without a leading zero byte, as lower-case hex. */
export const randomSerialNumber = () => {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString("hex");
};

export type Signer = {
  privateKeyPem: string;
  keyAlgorithm: CertKeyAlgorithm;
  certificatePem?: string;
  name: x509.Name;
};

export const KEY_USAGE_FLAGS: Record<string, x509.KeyUsageFlags> = {
  digital_signature: x509.KeyUsageFlags.digitalSignature,
  non_repudiation: x509.KeyUsageFlags.nonRepudiation,
  key_encipherment: x509.KeyUsageFlags.keyEncipherment,
  data_encipherment: x509.KeyUsageFlags.dataEncipherment,
  key_agreement: x509.KeyUsageFlags.keyAgreement,
  key_cert_sign: x509.KeyUsageFlags.keyCertSign,
  crl_sign: x509.KeyUsageFlags.cRLSign,
  encipher_only: x509.KeyUsageFlags.encipherOnly,
  decipher_only: x509.KeyUsageFlags.decipherOnly,
};

export const EXTENDED_KEY_USAGE_OIDS: Record<string, string> = {
  server_auth: x509.ExtendedKeyUsage.serverAuth,
  client_auth: x509.ExtendedKeyUsage.clientAuth,
  code_signing: x509.ExtendedKeyUsage.codeSigning,
  email_protection: x509.ExtendedKeyUsage.emailProtection,
  timestamping: x509.ExtendedKeyUsage.timeStamping,
  ocsp_signing: x509.ExtendedKeyUsage.ocspSigning,
};

const SAN_TYPE: Record<string, x509.GeneralNameType> = {
  dns_name: "dns",
  ip_address: "ip",
  email: "email",
  uri: "url",
};

export type CertificateSpec = {
  serialNumber: string;
  subject: x509.Name;
  publicKey: CryptoKey | x509.PublicKey;
  notBefore: Date;
  notAfter: Date;
  signatureAlgorithm: SignatureAlgorithm;
  basicConstraints?: { isCA: boolean; pathLength?: number };
  keyUsages: string[];
  extendedKeyUsages: string[];
  altNames: { type: string; value: string }[];
  customExtensions?: { oid: string; value: string; critical: boolean }[];
  /** The issuer's OCSP responder, placed in the Authority Information Access extension. */
  ocspUrl?: string;
};

/**
 * Sign a certificate. With no `issuer` it is self-signed with `selfKeyPem`. Every certificate
 * carries a subject key identifier, and an authority key identifier naming its signer's key.
 */
export const signCertificate = async (spec: CertificateSpec, issuer: Signer): Promise<x509.X509Certificate> => {
  const signingKey = await importPrivateKey(issuer.privateKeyPem, issuer.keyAlgorithm, spec.signatureAlgorithm);
  const issuerPublicKey = issuer.certificatePem
    ? new x509.X509Certificate(issuer.certificatePem).publicKey
    : spec.publicKey;
  const extensions: x509.Extension[] = [
    await x509.SubjectKeyIdentifierExtension.create(spec.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(issuerPublicKey),
  ];
  if (spec.basicConstraints) {
    const { isCA, pathLength } = spec.basicConstraints;
    extensions.push(new x509.BasicConstraintsExtension(isCA, isCA ? pathLength : undefined, true));
  }
  const usage = spec.keyUsages.reduce((flags, u) => flags | (KEY_USAGE_FLAGS[u] ?? 0), 0);
  if (usage) extensions.push(new x509.KeyUsagesExtension(usage, true));
  if (spec.extendedKeyUsages.length > 0) {
    extensions.push(
      new x509.ExtendedKeyUsageExtension(
        spec.extendedKeyUsages.map((u) => EXTENDED_KEY_USAGE_OIDS[u]!),
        false,
      ),
    );
  }
  if (spec.altNames.length > 0) {
    const names = spec.altNames.map((n) => ({ type: SAN_TYPE[n.type]!, value: n.value }));
    // With an empty subject the names are the only identity, so RFC 5280 makes the extension critical.
    extensions.push(new x509.SubjectAlternativeNameExtension(names, spec.subject.toString() === ""));
  }
  if (spec.ocspUrl) extensions.push(new x509.AuthorityInfoAccessExtension({ ocsp: [spec.ocspUrl] }));
  for (const ext of spec.customExtensions ?? []) {
    extensions.push(new x509.Extension(ext.oid, ext.critical, Buffer.from(ext.value, "base64")));
  }
  return x509.X509CertificateGenerator.create({
    serialNumber: spec.serialNumber,
    subject: spec.subject,
    issuer: issuer.name,
    notBefore: spec.notBefore,
    notAfter: spec.notAfter,
    publicKey: spec.publicKey,
    signingKey,
    signingAlgorithm: signingParams(spec.signatureAlgorithm),
    extensions,
  });
};

/** Parse and check a PKCS#10 request; undefined when it is not one or its signature does not hold. */
export const parseCsr = async (pem: string): Promise<x509.Pkcs10CertificateRequest | undefined> => {
  try {
    const csr = new x509.Pkcs10CertificateRequest(pem);
    return (await csr.verify()) ? csr : undefined;
  } catch {
    return undefined;
  }
};

/** The alternative names a CSR asks for, as `{type: "dns" | "ip" | "email" | "url" | ..., value}`. */
export const csrAltNames = (csr: x509.Pkcs10CertificateRequest) =>
  csr.extensions.find(
    (e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension,
  )?.names.items ?? [];

/**
 * True when the texts a CSR asks for (subject and alternative names) are well-formed Unicode: a
 * BMPString is UTF-16 on the wire and decodes a lone surrogate as it is.
 */
export const csrTextIsWellFormed = (csr: x509.Pkcs10CertificateRequest) =>
  isWellFormedText(csr.subject) && csrAltNames(csr).every((name) => isWellFormedText(name.value));

/** The first value of an attribute of a name, e.g. the CN. */
export const nameAttribute = (name: x509.Name, attribute: string) => name.getField(attribute)[0];

/** How long a CRL (and an OCSP answer, which says the same) is current: its nextUpdate is thisUpdate plus this. */
export const CRL_LIFETIME_MS = 24 * 3600 * 1000;

export const CRL_REASON: Record<string, CRLReasons> = {
  UNSPECIFIED: CRLReasons.unspecified,
  KEY_COMPROMISE: CRLReasons.keyCompromise,
  CA_COMPROMISE: CRLReasons.cACompromise,
  AFFILIATION_CHANGED: CRLReasons.affiliationChanged,
  SUPERSEDED: CRLReasons.superseded,
  CESSATION_OF_OPERATION: CRLReasons.cessationOfOperation,
  CERTIFICATE_HOLD: CRLReasons.certificateHold,
  PRIVILEGE_WITHDRAWN: CRLReasons.privilegeWithdrawn,
  A_A_COMPROMISE: CRLReasons.aACompromise,
};

/**
 * A CRL signed by the CA. The CRL number is the signing second, so numbers grow without a stored
 * counter (CRLs are made on demand).
 */
export const signCrl = async (
  ca: Signer & { certificatePem: string },
  entries: { serialNumber: string; revokedAt: Date; reason: string }[],
  now = new Date(),
): Promise<string> => {
  const sig = defaultSignatureAlgorithm(ca.keyAlgorithm);
  const crl = await x509.X509CrlGenerator.create({
    issuer: new x509.X509Certificate(ca.certificatePem).subjectName,
    thisUpdate: now,
    nextUpdate: new Date(now.getTime() + CRL_LIFETIME_MS),
    signingKey: await importPrivateKey(ca.privateKeyPem, ca.keyAlgorithm, sig),
    signingAlgorithm: signingParams(sig),
    extensions: [
      await x509.AuthorityKeyIdentifierExtension.create(new x509.X509Certificate(ca.certificatePem).publicKey),
      new x509.Extension(id_ce_cRLNumber, false, AsnConvert.serialize(new CRLNumber(Math.floor(now.getTime() / 1000)))),
    ],
    // The reason goes in as an explicit entry extension: left to the generator, "unspecified" (0)
    // would leave an empty extension list, which openssl rejects.
    entries: entries.map((e) => ({
      serialNumber: e.serialNumber,
      revocationDate: e.revokedAt,
      extensions: [
        new x509.Extension(
          id_ce_cRLReasons,
          false,
          AsnConvert.serialize(new CRLReason(CRL_REASON[e.reason] ?? CRLReasons.unspecified)),
        ),
      ],
    })),
  });
  // openssl and most tools expect the "X509 CRL" PEM label.
  return x509.PemConverter.encode(crl.rawData, "X509 CRL");
};

export { x509 };
