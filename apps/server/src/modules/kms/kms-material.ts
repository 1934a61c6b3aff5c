import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import type { KmsEncryptionAlgorithm } from "@keyward/contract";
import type { DataKey } from "../../crypto/data-keys";
import type { SigningKeys } from "./kms-signing";

/**
 * Key material: raw AES key bytes for symmetric keys, PKCS#8 DER of the private key for asymmetric
 * ones. Stored only sealed under the project's data key, bound to its version row.
 */
const generatePair = promisify(generateKeyPair);

export type NewMaterial = { material: Buffer; publicKey: string | null };

export const isSymmetric = (algorithm: string) => algorithm === "aes-256-gcm" || algorithm === "aes-128-gcm";

export const generateMaterial = async (algorithm: KmsEncryptionAlgorithm): Promise<NewMaterial> => {
  if (algorithm === "aes-256-gcm") return { material: randomBytes(32), publicKey: null };
  if (algorithm === "aes-128-gcm") return { material: randomBytes(16), publicKey: null };
  // Generated off the event loop's thread: an RSA-4096 key takes up to seconds.
  const pair =
    algorithm === "RSA_4096"
      ? await generatePair("rsa", { modulusLength: 4096 })
      : await generatePair("ec", { namedCurve: "prime256v1" });
  return {
    material: pair.privateKey.export({ format: "der", type: "pkcs8" }),
    publicKey: pair.publicKey.export({ format: "der", type: "spki" }).toString("base64"),
  };
};

const materialAad = (versionId: string) => `kms_key_versions:${versionId}:encrypted_material`;

export const sealMaterial = (dataKey: DataKey, versionId: string, material: Buffer) =>
  dataKey.seal(material.toString("base64"), materialAad(versionId));

/** An unwrapped key version, ready to use: what the in-memory cache holds (never written anywhere). */
export type OpenMaterial = { kind: "symmetric"; key: Buffer } | ({ kind: "asymmetric" } & SigningKeys);

const fromBase64Url = (value: string | undefined) => Buffer.from(value ?? "", "base64url");

export const openMaterial = (dataKey: DataKey, versionId: string, algorithm: string, sealed: string): OpenMaterial => {
  const material = Buffer.from(dataKey.open(sealed, materialAad(versionId)), "base64");
  if (isSymmetric(algorithm)) return { kind: "symmetric", key: material };
  const privateKey: KeyObject = createPrivateKey({ key: material, format: "der", type: "pkcs8" });
  const publicKey = createPublicKey(privateKey);
  if (algorithm !== "ECC_NIST_P256") return { kind: "asymmetric", privateKey, publicKey };
  const jwk = privateKey.export({ format: "jwk" });
  return {
    kind: "asymmetric",
    privateKey,
    publicKey,
    ecSecret: fromBase64Url(jwk.d),
    ecPublic: Buffer.concat([Buffer.from([4]), fromBase64Url(jwk.x), fromBase64Url(jwk.y)]),
  };
};

/** The exported form: PKCS#8 DER for a private key, the raw bytes of a symmetric key. */
export const exportMaterial = (open: OpenMaterial) =>
  open.kind === "symmetric" ? open.key : open.privateKey.export({ format: "der", type: "pkcs8" });
