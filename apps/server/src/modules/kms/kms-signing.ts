import {
  constants,
  createHash,
  privateEncrypt,
  publicDecrypt,
  randomBytes,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from "node:crypto";
import { p256 } from "@noble/curves/nist.js";
import type { KmsSigningAlgorithm } from "@keyward/contract";

/**
 * Signing with the KMS signing algorithms. Message mode hashes with Node's crypto. Digest mode
 * (the caller hashed already) has no Node API: PKCS#1 v1.5 pads the DigestInfo with privateEncrypt,
 * RSA-PSS applies EMSA-PSS (RFC 8017 §9.1) before the raw RSA operation, and ECDSA goes through
 * @noble/curves without its prehash. RSA-PSS uses a salt as long as the digest; ECDSA signatures are
 * DER (ASN.1), as OpenSSL writes and reads them.
 */
type Hash = "sha256" | "sha384" | "sha512";
const HASH_OF: Record<string, Hash> = { SHA_256: "sha256", SHA_384: "sha384", SHA_512: "sha512" };
const DIGEST_BYTES: Record<Hash, number> = { sha256: 32, sha384: 48, sha512: 64 };
/** DER DigestInfo headers for PKCS#1 v1.5 (RFC 8017 §9.2 note 1). */
const DIGEST_INFO: Record<Hash, Buffer> = {
  sha256: Buffer.from("3031300d060960864801650304020105000420", "hex"),
  sha384: Buffer.from("3041300d060960864801650304020205000430", "hex"),
  sha512: Buffer.from("3051300d060960864801650304020305000440", "hex"),
};

export type SigningScheme = { family: "pss" | "pkcs1" | "ecdsa"; hash: Hash };

export const schemeOf = (algorithm: KmsSigningAlgorithm): SigningScheme => {
  const hash = HASH_OF[algorithm.slice(-7)]!;
  if (algorithm.startsWith("RSASSA_PSS")) return { family: "pss", hash };
  if (algorithm.startsWith("RSASSA_PKCS1")) return { family: "pkcs1", hash };
  return { family: "ecdsa", hash };
};

export const digestLength = (scheme: SigningScheme) => DIGEST_BYTES[scheme.hash];

/** The key pair as signing needs it; `ecSecret`/`ecPublic` are the raw P-256 scalars for digest mode. */
export type SigningKeys = { privateKey: KeyObject; publicKey: KeyObject; ecSecret?: Uint8Array; ecPublic?: Uint8Array };

const rsaOptions = (key: KeyObject, scheme: SigningScheme) =>
  scheme.family === "pss"
    ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
    : { key, padding: constants.RSA_PKCS1_PADDING };

const mgf1 = (hash: Hash, seed: Buffer, length: number) => {
  const out: Buffer[] = [];
  for (let counter = 0; out.length * DIGEST_BYTES[hash] < length; counter += 1) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    out.push(createHash(hash).update(seed).update(c).digest());
  }
  return Buffer.concat(out).subarray(0, length);
};

const pssHash = (hash: Hash, digest: Buffer, salt: Buffer) =>
  createHash(hash).update(Buffer.alloc(8)).update(digest).update(salt).digest();

/** EMSA-PSS-ENCODE with sLen = hLen, emBits = modBits - 1 (RFC 8017 §9.1.1). */
const pssEncode = (hash: Hash, digest: Buffer, modBits: number) => {
  const hLen = DIGEST_BYTES[hash];
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  const salt = randomBytes(hLen);
  const h = pssHash(hash, digest, salt);
  const db = Buffer.concat([Buffer.alloc(emLen - 2 * hLen - 2), Buffer.from([1]), salt]);
  const mask = mgf1(hash, h, emLen - hLen - 1);
  for (let i = 0; i < db.length; i += 1) db[i]! ^= mask[i]!;
  db[0]! &= 0xff >> (8 * emLen - emBits);
  const em = Buffer.concat([db, h, Buffer.from([0xbc])]);
  // The raw RSA operation takes a block as long as the modulus.
  return em.length * 8 < modBits ? Buffer.concat([Buffer.alloc(1), em]) : em;
};

/** EMSA-PSS-VERIFY with sLen = hLen (RFC 8017 §9.1.2). */
const pssVerify = (hash: Hash, digest: Buffer, block: Buffer, modBits: number) => {
  const hLen = DIGEST_BYTES[hash];
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  const em = block.subarray(block.length - emLen);
  if (block.length > emLen && block[0] !== 0) return false;
  if (em[emLen - 1] !== 0xbc) return false;
  const db = Buffer.from(em.subarray(0, emLen - hLen - 1));
  const h = em.subarray(emLen - hLen - 1, emLen - 1);
  if ((db[0]! & ~(0xff >> (8 * emLen - emBits)) & 0xff) !== 0) return false;
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i += 1) db[i]! ^= mask[i]!;
  db[0]! &= 0xff >> (8 * emLen - emBits);
  const ps = emLen - 2 * hLen - 2;
  if (!db.subarray(0, ps).every((b) => b === 0) || db[ps] !== 1) return false;
  return timingSafeEqual(h, pssHash(hash, digest, db.subarray(db.length - hLen)));
};

const modulusBits = (key: KeyObject) => key.asymmetricKeyDetails?.modulusLength ?? 0;

export const signData = (keys: SigningKeys, scheme: SigningScheme, data: Buffer, isDigest: boolean): Buffer => {
  if (!isDigest) {
    return scheme.family === "ecdsa"
      ? sign(scheme.hash, data, keys.privateKey)
      : sign(scheme.hash, data, rsaOptions(keys.privateKey, scheme));
  }
  if (scheme.family === "ecdsa")
    return Buffer.from(p256.sign(data, keys.ecSecret!, { prehash: false, format: "der", lowS: false }));
  const block =
    scheme.family === "pkcs1"
      ? Buffer.concat([DIGEST_INFO[scheme.hash], data])
      : pssEncode(scheme.hash, data, modulusBits(keys.privateKey));
  const padding = scheme.family === "pkcs1" ? constants.RSA_PKCS1_PADDING : constants.RSA_NO_PADDING;
  return privateEncrypt({ key: keys.privateKey, padding }, block);
};

/** False for any signature that does not check out, malformed ones included. */
export const verifySignature = (
  keys: SigningKeys,
  scheme: SigningScheme,
  data: Buffer,
  signature: Buffer,
  isDigest: boolean,
): boolean => {
  try {
    if (!isDigest) {
      return scheme.family === "ecdsa"
        ? verify(scheme.hash, data, keys.publicKey, signature)
        : verify(scheme.hash, data, rsaOptions(keys.publicKey, scheme), signature);
    }
    if (scheme.family === "ecdsa")
      return p256.verify(signature, data, keys.ecPublic!, { prehash: false, format: "der", lowS: false });
    const bits = modulusBits(keys.publicKey);
    if (signature.length !== Math.ceil(bits / 8)) return false;
    if (scheme.family === "pkcs1") {
      const expected = Buffer.concat([DIGEST_INFO[scheme.hash], data]);
      const block = publicDecrypt({ key: keys.publicKey, padding: constants.RSA_PKCS1_PADDING }, signature);
      return block.length === expected.length && timingSafeEqual(block, expected);
    }
    const block = publicDecrypt({ key: keys.publicKey, padding: constants.RSA_NO_PADDING }, signature);
    return pssVerify(scheme.hash, data, block, bits);
  } catch {
    return false;
  }
};
