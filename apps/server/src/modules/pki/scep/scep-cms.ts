import {
  constants,
  createDecipheriv,
  createHash,
  createHmac,
  createPublicKey,
  privateDecrypt,
  verify,
  type KeyObject,
} from "node:crypto";
import {
  Attribute,
  ContentInfo,
  EnvelopedData,
  SignedData,
  id_envelopedData,
  id_signedData,
  type SignerIdentifier,
  type SignerInfo,
} from "@peculiar/asn1-cms";
import { AsnArray, AsnConvert, AsnType, AsnTypeTypes, OctetString } from "@peculiar/asn1-schema";
import { DirectoryString, type Certificate } from "@peculiar/asn1-x509";

/**
 * The CMS pieces of SCEP (RFC 8894): reading a client's signed and enveloped pkiMessage and writing
 * the RA's signed CertRep. Structures are read and written with @peculiar/asn1-cms; the crypto is
 * node's (RSA key transport, AES-CBC or DES-EDE3-CBC content, RSA signatures).
 */

export const OID = {
  contentType: "1.2.840.113549.1.9.3",
  messageDigest: "1.2.840.113549.1.9.4",
  messageType: "2.16.840.1.113733.1.9.2",
  pkiStatus: "2.16.840.1.113733.1.9.3",
  failInfo: "2.16.840.1.113733.1.9.4",
  senderNonce: "2.16.840.1.113733.1.9.5",
  recipientNonce: "2.16.840.1.113733.1.9.6",
  transactionId: "2.16.840.1.113733.1.9.7",
  rsaEncryption: "1.2.840.113549.1.1.1",
} as const;

/** Digests accepted on requests (SHA-1 and MD5 are refused as badAlg). */
const DIGESTS: Record<string, string> = {
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};

/** RSA signature algorithms as signers name them: plain rsaEncryption or with a hash. */
const RSA_SIGNATURES: readonly string[] = [
  OID.rsaEncryption,
  "1.2.840.113549.1.1.11",
  "1.2.840.113549.1.1.12",
  "1.2.840.113549.1.1.13",
];

/** Content ciphers accepted on requests; single DES is refused as badAlg. */
const CIPHERS: Record<string, { name: string; keyLength: number }> = {
  "2.16.840.1.101.3.4.1.2": { name: "aes-128-cbc", keyLength: 16 },
  "2.16.840.1.101.3.4.1.22": { name: "aes-192-cbc", keyLength: 24 },
  "2.16.840.1.101.3.4.1.42": { name: "aes-256-cbc", keyLength: 32 },
  "1.2.840.113549.3.7": { name: "des-ede3-cbc", keyLength: 24 },
};

/** SCEP failInfo values (RFC 8894 §3.2.1.4.5). */
export const FAIL_INFO = { badAlg: 0, badMessageCheck: 1, badRequest: 2, badTime: 3, badCertId: 4 } as const;
export type FailInfo = keyof typeof FAIL_INFO;

/** A request the server answers with a signed FAILURE, carrying the reason's failInfo. */
export class ScepFailure extends Error {
  constructor(
    readonly failInfo: FailInfo,
    message: string,
  ) {
    super(message);
  }
}

/** A message that cannot be answered in SCEP at all (no transaction to answer): plain HTTP 400. */
export class ScepUnreadable extends Error {}

const toBuffer = (value: ArrayBuffer | ArrayBufferView) =>
  ArrayBuffer.isView(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : Buffer.from(new Uint8Array(value));

/** SET OF Attribute: what a signer info's signature covers. */
class AttributeSet extends AsnArray<Attribute> {}
AsnType({ type: AsnTypeTypes.Set, itemType: Attribute })(AttributeSet);

/** The bytes a signature over signed attributes covers: the attributes encoded as a SET OF, in their order. */
export const signedAttributesDer = (attributes: Attribute[]) =>
  Buffer.from(AsnConvert.serialize(new AttributeSet(attributes)));

export const printable = (value: string) => AsnConvert.serialize(new DirectoryString({ printableString: value }));
export const octets = (value: Buffer) => AsnConvert.serialize(new OctetString(value));

const readString = (value: ArrayBuffer) => {
  const s = AsnConvert.parse(value, DirectoryString);
  return s.printableString ?? s.utf8String ?? s.teletexString ?? s.universalString ?? s.bmpString ?? "";
};
const readOctets = (value: ArrayBuffer) => toBuffer(AsnConvert.parse(value, OctetString).buffer);

export const publicKeyOf = (certificate: Certificate): KeyObject =>
  createPublicKey({
    key: Buffer.from(AsnConvert.serialize(certificate.tbsCertificate.subjectPublicKeyInfo)),
    format: "der",
    type: "spki",
  });

export type PkiMessage = {
  messageType: string;
  transactionId: string;
  senderNonce: Buffer;
  /** The certificate that signed the request (self-signed for PKCSReq, the one renewed for RenewalReq). */
  signer: Certificate;
  signerDer: Buffer;
  /** The pkcsPKIEnvelope (EnvelopedData), checked against the signature. */
  envelope: ContentInfo | undefined;
  /** Why the signature does not hold, when it does not. */
  problem?: ScepFailure;
};

const sameSigner = (sid: SignerIdentifier, certificate: Certificate) => {
  const ias = sid.issuerAndSerialNumber;
  if (!ias) return false;
  return (
    Buffer.compare(toBuffer(ias.serialNumber), toBuffer(certificate.tbsCertificate.serialNumber)) === 0 &&
    Buffer.compare(
      Buffer.from(AsnConvert.serialize(ias.issuer)),
      Buffer.from(AsnConvert.serialize(certificate.tbsCertificate.issuer)),
    ) === 0
  );
};

/** Read a pkiMessage and check its signature; a message with no transaction to answer is ScepUnreadable. */
export const readPkiMessage = (der: Buffer): PkiMessage => {
  let signed: SignedData;
  let signerInfo: SignerInfo;
  try {
    const info = AsnConvert.parse(der, ContentInfo);
    if (info.contentType !== id_signedData) throw new Error("not signed-data");
    signed = AsnConvert.parse(info.content, SignedData);
    if (signed.signerInfos.length !== 1) throw new Error("one signer expected");
    signerInfo = signed.signerInfos[0]!;
  } catch {
    throw new ScepUnreadable("The message is not a CMS signed-data pkiMessage");
  }
  const attributes = new Map<string, ArrayBuffer>();
  for (const attribute of signerInfo.signedAttrs ?? []) {
    if (attribute.attrValues[0]) attributes.set(attribute.attrType, attribute.attrValues[0]);
  }
  let transactionId: string, messageType: string, senderNonce: Buffer;
  try {
    transactionId = readString(attributes.get(OID.transactionId)!);
    messageType = readString(attributes.get(OID.messageType)!);
    senderNonce = readOctets(attributes.get(OID.senderNonce)!);
  } catch {
    throw new ScepUnreadable("The pkiMessage lacks its transactionID, messageType or senderNonce");
  }
  const signer = (signed.certificates ?? [])
    .flatMap((c) => (c.certificate ? [c.certificate] : []))
    .find((c) => sameSigner(signerInfo.sid, c));
  if (!signer || !transactionId || senderNonce.length === 0) {
    throw new ScepUnreadable("The pkiMessage does not carry its signer's certificate");
  }
  const message: PkiMessage = {
    messageType,
    transactionId,
    senderNonce,
    signer,
    signerDer: Buffer.from(AsnConvert.serialize(signer)),
    envelope: undefined,
  };
  const content = signed.encapContentInfo.eContent;
  const body = content?.single ? toBuffer(content.single.buffer) : undefined;
  try {
    if (body) message.envelope = AsnConvert.parse(body, ContentInfo);
  } catch {
    message.problem = new ScepFailure("badMessageCheck", "The pkcsPKIEnvelope cannot be read");
  }
  const hash = DIGESTS[signerInfo.digestAlgorithm.algorithm];
  if (!hash) {
    message.problem = new ScepFailure("badAlg", "The message digest must be SHA-256, SHA-384 or SHA-512");
    return message;
  }
  if (!RSA_SIGNATURES.includes(signerInfo.signatureAlgorithm.algorithm)) {
    message.problem = new ScepFailure("badAlg", "The request must be signed with an RSA key");
    return message;
  }
  const digest = attributes.get(OID.messageDigest);
  let holds = false;
  try {
    if (body && digest && signerInfo.signedAttrs) {
      // Re-encoded in the order received: a DER signer (as SCEP requires) sent them sorted already.
      const signedBytes = signedAttributesDer(signerInfo.signedAttrs);
      holds =
        readOctets(digest).equals(createHash(hash).update(body).digest()) &&
        verify(hash, signedBytes, publicKeyOf(signer), toBuffer(signerInfo.signature.buffer));
    }
  } catch {
    holds = false;
  }
  if (!holds) message.problem = new ScepFailure("badMessageCheck", "The message signature does not verify");
  return message;
};

/** 1 when `x` (a small non-negative integer) is 0, else 0; without a branch. */
const isZero = (x: number) => ((x - 1) >>> 31) & 1;

/**
 * The RSA-encrypted content key, recovered without revealing whether its padding was right
 * (PKCS#1 v1.5 type 2: 00 02, at least eight non-zero bytes, 00, the key). The checks run without
 * branching on the block, and a bad block gives a substitute key derived from the RA key and the
 * ciphertext, so a bad message fails later, at the content, exactly like a good key for the wrong
 * content would: no padding oracle in the answer.
 */
export const recoverContentKey = (key: KeyObject, encrypted: Buffer, keyLength: number) => {
  const block = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, encrypted);
  const substitute = createHmac("sha256", key.export({ format: "der", type: "pkcs8" }))
    .update(encrypted)
    .digest()
    .subarray(0, keyLength);
  let separator = 0;
  for (let i = 2; i < block.length; i++) separator |= i * (isZero(block[i]!) & isZero(separator));
  let bad = block[0]! | (block[1]! ^ 0x02);
  bad |= (separator - 10) >>> 31; // fewer than eight padding bytes (or no separator)
  bad |= (block.length - separator - 1) ^ keyLength;
  const keep = isZero(bad) * 0xff;
  const recovered = block.subarray(block.length - keyLength);
  const out = Buffer.alloc(keyLength);
  for (let i = 0; i < keyLength; i++) out[i] = (recovered[i]! & keep) | (substitute[i]! & ~keep & 0xff);
  return out;
};

export type RaKey = { certificate: Certificate; privateKey: KeyObject };

/** The RA certificate an envelope is addressed to (issuer and serial), among the profile's RAs. */
export const recipientSerialOf = (envelope: ContentInfo) => {
  try {
    const enveloped = AsnConvert.parse(envelope.content, EnvelopedData);
    const ktri = enveloped.recipientInfos.find((r) => r.ktri)?.ktri;
    const serial = ktri?.rid.issuerAndSerialNumber?.serialNumber;
    return serial
      ? toBuffer(serial)
          .toString("hex")
          .replace(/^(00)+(?=.)/, "")
      : undefined;
  } catch {
    return undefined;
  }
};

/** Open a pkcsPKIEnvelope addressed to the RA; its content (a PKCS#10 request or an IssuerAndSubject). */
export const openEnvelope = (envelope: ContentInfo | undefined, ra: RaKey): Buffer => {
  if (!envelope || envelope.contentType !== id_envelopedData) {
    throw new ScepFailure("badMessageCheck", "The message carries no pkcsPKIEnvelope");
  }
  let enveloped: EnvelopedData;
  try {
    enveloped = AsnConvert.parse(envelope.content, EnvelopedData);
  } catch {
    throw new ScepFailure("badMessageCheck", "The pkcsPKIEnvelope cannot be read");
  }
  const ktri = enveloped.recipientInfos.find((r) => r.ktri && sameSigner(r.ktri.rid, ra.certificate))?.ktri;
  if (!ktri) throw new ScepFailure("badMessageCheck", "The envelope is not addressed to this profile's RA certificate");
  if (ktri.keyEncryptionAlgorithm.algorithm !== OID.rsaEncryption) {
    throw new ScepFailure("badAlg", "The content key must be RSA (PKCS#1 v1.5) encrypted");
  }
  const info = enveloped.encryptedContentInfo;
  const cipher = CIPHERS[info.contentEncryptionAlgorithm.algorithm];
  if (!cipher) throw new ScepFailure("badAlg", "The content must be encrypted with AES-CBC or DES-EDE3-CBC");
  try {
    const iv = readOctets(info.contentEncryptionAlgorithm.parameters!);
    const encrypted = info.encryptedContent?.value
      ? toBuffer(info.encryptedContent.value.buffer)
      : Buffer.concat((info.encryptedContent?.constructedValue ?? []).map((part) => toBuffer(part.buffer)));
    const key = recoverContentKey(ra.privateKey, toBuffer(ktri.encryptedKey.buffer), cipher.keyLength);
    const decipher = createDecipheriv(cipher.name, key, iv);
    return Buffer.concat([decipher.update(encrypted), decipher.final()]);
  } catch {
    throw new ScepFailure("badMessageCheck", "The pkcsPKIEnvelope cannot be decrypted");
  }
};
