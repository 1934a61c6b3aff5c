import { constants, createCipheriv, createHash, publicEncrypt, randomBytes, sign } from "node:crypto";
import {
  Attribute,
  CertificateChoices,
  CertificateSet,
  ContentInfo,
  DigestAlgorithmIdentifiers,
  EncapsulatedContent,
  EncapsulatedContentInfo,
  EncryptedContent,
  EncryptedContentInfo,
  EnvelopedData,
  IssuerAndSerialNumber,
  KeyTransRecipientInfo,
  RecipientIdentifier,
  RecipientInfo,
  RecipientInfos,
  SignedData,
  SignerIdentifier,
  SignerInfo,
  SignerInfos,
  id_data,
  id_envelopedData,
  id_signedData,
} from "@peculiar/asn1-cms";
import { AsnConvert, AsnObjectIdentifierConverter, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate } from "@peculiar/asn1-x509";
import {
  FAIL_INFO,
  OID,
  octets,
  printable,
  publicKeyOf,
  signedAttributesDer,
  type FailInfo,
  type PkiMessage,
  type RaKey,
} from "./scep-cms";

/** The RA's answers: degenerate certificate lists and signed CertReps (RFC 8894 §3.3.2). */

const SHA256_OID = "2.16.840.1.101.3.4.2.1";
const AES128_OID = "2.16.840.1.101.3.4.1.2";

const certificateSet = (certificates: Buffer[]) =>
  new CertificateSet(
    certificates.map((der) => new CertificateChoices({ certificate: AsnConvert.parse(der, Certificate) })),
  );

/** A degenerate (certificates-only) PKCS#7 signed-data, DER. */
export const degenerateCertificates = (certificates: Buffer[]) =>
  Buffer.from(
    AsnConvert.serialize(
      new ContentInfo({
        contentType: id_signedData,
        content: AsnConvert.serialize(
          new SignedData({
            version: 1,
            digestAlgorithms: new DigestAlgorithmIdentifiers([]),
            encapContentInfo: new EncapsulatedContentInfo({ eContentType: id_data }),
            certificates: certificateSet(certificates),
            signerInfos: new SignerInfos([]),
          }),
        ),
      }),
    ),
  );

/** Envelope `content` for the requester's certificate: AES-128-CBC, the key RSA-encrypted (PKCS#1 v1.5). */
const envelopeFor = (recipient: Certificate, content: Buffer) => {
  const key = randomBytes(16);
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-128-cbc", key, iv);
  const encrypted = Buffer.concat([cipher.update(content), cipher.final()]);
  const enveloped = new EnvelopedData({
    version: 0,
    recipientInfos: new RecipientInfos([
      new RecipientInfo({
        ktri: new KeyTransRecipientInfo({
          version: 0,
          rid: new RecipientIdentifier({
            issuerAndSerialNumber: new IssuerAndSerialNumber({
              issuer: recipient.tbsCertificate.issuer,
              serialNumber: recipient.tbsCertificate.serialNumber,
            }),
          }),
          keyEncryptionAlgorithm: new AlgorithmIdentifier({ algorithm: OID.rsaEncryption, parameters: null }),
          encryptedKey: new OctetString(
            publicEncrypt({ key: publicKeyOf(recipient), padding: constants.RSA_PKCS1_PADDING }, key),
          ),
        }),
      }),
    ]),
    encryptedContentInfo: new EncryptedContentInfo({
      contentType: id_data,
      contentEncryptionAlgorithm: new AlgorithmIdentifier({ algorithm: AES128_OID, parameters: octets(iv) }),
      encryptedContent: new EncryptedContent({ value: new OctetString(encrypted) }),
    }),
  });
  return Buffer.from(
    AsnConvert.serialize(new ContentInfo({ contentType: id_envelopedData, content: AsnConvert.serialize(enveloped) })),
  );
};

export type CertRep = {
  request: Pick<PkiMessage, "transactionId" | "senderNonce" | "signer">;
  ra: RaKey;
  raDer: Buffer;
} & ({ status: "SUCCESS"; certificates: Buffer[] } | { status: "FAILURE"; failInfo: FailInfo });

const attribute = (type: string, value: ArrayBuffer) => new Attribute({ attrType: type, attrValues: [value] });

/** Sort a SET OF by encoding, as DER requires (the client re-encodes the attributes to check the signature). */
const derSorted = (attributes: Attribute[]) =>
  attributes
    .map((a) => ({ a, der: Buffer.from(AsnConvert.serialize(a)) }))
    .sort((x, y) => Buffer.compare(x.der, y.der))
    .map((x) => x.a);

/**
 * The RA's signed CertRep. A failure still carries an envelope (of nothing) for the requester, so
 * clients that insist on encapsulated content can tell a refusal from a broken answer.
 */
export const certRep = (rep: CertRep) => {
  const canEncrypt = rep.request.signer.tbsCertificate.subjectPublicKeyInfo.algorithm.algorithm === OID.rsaEncryption;
  const inner = rep.status === "SUCCESS" ? degenerateCertificates(rep.certificates) : Buffer.alloc(0);
  const body = canEncrypt ? envelopeFor(rep.request.signer, inner) : Buffer.alloc(0);
  const attrs = [
    attribute(OID.contentType, AsnObjectIdentifierConverter.toASN(id_data).toBER()),
    attribute(OID.messageDigest, octets(createHash("sha256").update(body).digest())),
    attribute(OID.messageType, printable("3")),
    attribute(OID.pkiStatus, printable(rep.status === "SUCCESS" ? "0" : "2")),
    attribute(OID.transactionId, printable(rep.request.transactionId)),
    attribute(OID.senderNonce, octets(randomBytes(16))),
    attribute(OID.recipientNonce, octets(rep.request.senderNonce)),
    ...(rep.status === "FAILURE" ? [attribute(OID.failInfo, printable(String(FAIL_INFO[rep.failInfo])))] : []),
  ];
  const signerInfo = new SignerInfo({
    version: 1,
    sid: new SignerIdentifier({
      issuerAndSerialNumber: new IssuerAndSerialNumber({
        issuer: rep.ra.certificate.tbsCertificate.issuer,
        serialNumber: rep.ra.certificate.tbsCertificate.serialNumber,
      }),
    }),
    digestAlgorithm: new AlgorithmIdentifier({ algorithm: SHA256_OID, parameters: null }),
    signedAttrs: derSorted(attrs),
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: OID.rsaEncryption, parameters: null }),
    signature: new OctetString(0),
  });
  signerInfo.signature = new OctetString(
    sign("sha256", signedAttributesDer(signerInfo.signedAttrs!), rep.ra.privateKey),
  );
  const signed = new SignedData({
    version: 1,
    digestAlgorithms: new DigestAlgorithmIdentifiers([
      new AlgorithmIdentifier({ algorithm: SHA256_OID, parameters: null }),
    ]),
    encapContentInfo: new EncapsulatedContentInfo({
      eContentType: id_data,
      eContent: new EncapsulatedContent({ single: new OctetString(body) }),
    }),
    certificates: certificateSet([rep.raDer]),
    signerInfos: new SignerInfos([signerInfo]),
  });
  return Buffer.from(
    AsnConvert.serialize(new ContentInfo({ contentType: id_signedData, content: AsnConvert.serialize(signed) })),
  );
};
