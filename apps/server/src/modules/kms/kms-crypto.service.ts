import type { KmsSigningAlgorithm, KmsSignBody, KmsVerifyBody } from "@keyward/contract";
import { KMS_SIGNING_ALGORITHMS } from "@keyward/contract";
import type { ActorContext } from "../../context";
import { BadRequestError } from "../../errors";
import { findProjectKey } from "../project-keys/project-key.service";
import { findKeyWithMaterial } from "./kms-key.repository";
import { assertKeyPermission, loadKey, type CmekAction } from "./kms-key.service";
import { ciphertextVersion, decryptWithKey, encryptWithKey } from "./kms-ciphertext";
import { exportMaterial, isSymmetric, openMaterial, type OpenMaterial } from "./kms-material";
import { digestLength, schemeOf, signData, verifySignature } from "./kms-signing";

type KeyWithMaterial = NonNullable<Awaited<ReturnType<typeof findKeyWithMaterial>>>;

const invalidCiphertext = () =>
  new BadRequestError("Invalid ciphertext: it is malformed, was altered, or was not made by this key");
const notForSigning = (keyId: string) => new BadRequestError(`Key with ID '${keyId}' is not intended for signing`);
const notForEncryption = (keyId: string) =>
  new BadRequestError(`Key with ID '${keyId}' is not intended for encryption`);

/** Reference order: existence, then disabled, then permission. */
const usableKey = async (ctx: ActorContext, keyId: string, action: CmekAction, version?: number) => {
  const row = await loadKey(ctx, keyId, (id) => findKeyWithMaterial(ctx.deps.db, id, version));
  if (row.is_disabled) throw new BadRequestError("Key is disabled");
  await assertKeyPermission(ctx, row, action);
  return row;
};

/** The version's material, unwrapped under the project's data key at most once per cache lifetime. */
const materialOf = async (ctx: ActorContext, row: KeyWithMaterial): Promise<OpenMaterial | undefined> => {
  if (!row.version_id || !row.encrypted_material) return undefined;
  const cached = ctx.deps.kmsMaterial.get(row.version_id);
  if (cached) return cached;
  const dataKey = await findProjectKey(ctx.deps, row.project_id);
  if (!dataKey) throw new Error("project data key missing for a stored KMS key");
  const material = openMaterial(dataKey, row.version_id, row.encryption_algorithm, row.encrypted_material);
  ctx.deps.kmsMaterial.set(row.version_id, material);
  return material;
};

const symmetricKey = async (ctx: ActorContext, row: KeyWithMaterial) => {
  if (!isSymmetric(row.encryption_algorithm)) throw notForEncryption(row.id);
  const material = await materialOf(ctx, row);
  return material?.kind === "symmetric" ? material.key : undefined;
};

export const encryptData = async (ctx: ActorContext, keyId: string, plaintext: string) => {
  const row = await usableKey(ctx, keyId, "encrypt");
  const key = await symmetricKey(ctx, row);
  if (!key) throw new Error("current KMS key version missing");
  return encryptWithKey(key, row.id, row.version, Buffer.from(plaintext, "base64")).toString("base64");
};

export const decryptData = async (ctx: ActorContext, keyId: string, ciphertext: string) => {
  const blob = Buffer.from(ciphertext, "base64");
  // A ciphertext that names no version looks up none, and fails below after the key's own checks.
  const row = await usableKey(ctx, keyId, "decrypt", ciphertextVersion(blob) ?? 0);
  const key = await symmetricKey(ctx, row);
  const plaintext = key ? decryptWithKey(key, row.id, blob) : undefined;
  if (!plaintext) throw invalidCiphertext();
  return plaintext.toString("base64");
};

const algorithmsFor = (row: KeyWithMaterial): KmsSigningAlgorithm[] => {
  if (row.key_usage !== "sign-verify") throw notForSigning(row.id);
  const prefix =
    row.encryption_algorithm === "RSA_4096" ? "RSASSA_" : row.encryption_algorithm === "ECC_NIST_P256" ? "ECDSA_" : "";
  if (!prefix) throw new BadRequestError(`Unsupported encryption algorithm: ${row.encryption_algorithm}`);
  return KMS_SIGNING_ALGORITHMS.filter((a) => a.startsWith(prefix));
};

export const listSigningAlgorithms = async (ctx: ActorContext, keyId: string) =>
  algorithmsFor(await usableKey(ctx, keyId, "read"));

const signingSetup = async (ctx: ActorContext, keyId: string, action: "sign" | "verify", body: KmsSignBody) => {
  const row = await usableKey(ctx, keyId, action);
  if (!algorithmsFor(row).includes(body.signingAlgorithm))
    throw new BadRequestError(
      `Signing algorithm ${body.signingAlgorithm} is not supported by key with ID '${row.id}' (${row.encryption_algorithm})`,
    );
  const scheme = schemeOf(body.signingAlgorithm);
  const data = Buffer.from(body.data, "base64");
  if (body.isDigest && data.length !== digestLength(scheme))
    throw new BadRequestError(
      `Invalid digest length for ${body.signingAlgorithm}: expected ${digestLength(scheme)} bytes, got ${data.length}`,
    );
  const material = await materialOf(ctx, row);
  if (material?.kind !== "asymmetric") throw new Error("current KMS key version missing");
  return { row, scheme, data, material };
};

export const signWithKey = async (ctx: ActorContext, keyId: string, body: KmsSignBody) => {
  const { row, scheme, data, material } = await signingSetup(ctx, keyId, "sign", body);
  const signature = signData(material, scheme, data, body.isDigest).toString("base64");
  return { signature, keyId: row.id, signingAlgorithm: body.signingAlgorithm };
};

export const verifyWithKey = async (ctx: ActorContext, keyId: string, body: KmsVerifyBody) => {
  const { row, scheme, data, material } = await signingSetup(ctx, keyId, "verify", body);
  const signatureValid = verifySignature(material, scheme, data, Buffer.from(body.signature, "base64"), body.isDigest);
  return { signatureValid, keyId: row.id, signingAlgorithm: body.signingAlgorithm };
};

/** Base64 of the DER SubjectPublicKeyInfo (`openssl pkey -pubin -inform DER`, Node `createPublicKey`). */
export const getPublicKey = async (ctx: ActorContext, keyId: string) => {
  const row = await usableKey(ctx, keyId, "read");
  if (row.key_usage !== "sign-verify" || !row.public_key) throw notForSigning(row.id);
  return row.public_key;
};

/** Base64 of the current version's material: PKCS#8 DER for a private key, raw bytes for an AES key. */
export const exportPrivateKey = async (ctx: ActorContext, keyId: string) => {
  const row = await usableKey(ctx, keyId, "export-private-key");
  const material = await materialOf(ctx, row);
  if (!material) throw new Error("current KMS key version missing");
  return exportMaterial(material).toString("base64");
};
