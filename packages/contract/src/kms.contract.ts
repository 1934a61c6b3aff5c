import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { isBase64 } from "./base64";
import { TimestampSchema, UuidSchema, slugSchema } from "./common";

const c = initContract();

export const KMS_KEY_USAGES = ["encrypt-decrypt", "sign-verify"] as const;
export const KmsKeyUsageSchema = z.enum(KMS_KEY_USAGES);
export type KmsKeyUsage = z.infer<typeof KmsKeyUsageSchema>;

export const SYMMETRIC_KMS_ALGORITHMS = ["aes-256-gcm", "aes-128-gcm"] as const;
export const ASYMMETRIC_KMS_ALGORITHMS = ["RSA_4096", "ECC_NIST_P256"] as const;
export type KmsEncryptionAlgorithm =
  (typeof SYMMETRIC_KMS_ALGORITHMS)[number] | (typeof ASYMMETRIC_KMS_ALGORITHMS)[number];

/** Older servers and the Go SDK's docs spell the asymmetric ones in lower case. */
const ALGORITHM_ALIASES: Record<string, KmsEncryptionAlgorithm> = {
  "rsa-4096": "RSA_4096",
  "ecc-nist-p256": "ECC_NIST_P256",
};
const KmsEncryptionAlgorithmSchema = z
  .enum([...SYMMETRIC_KMS_ALGORITHMS, ...ASYMMETRIC_KMS_ALGORITHMS, "rsa-4096", "ecc-nist-p256"])
  .transform((value): KmsEncryptionAlgorithm => ALGORITHM_ALIASES[value] ?? (value as KmsEncryptionAlgorithm));

/** In enum order: per key type, SHA-512, SHA-384, SHA-256. */
export const KMS_SIGNING_ALGORITHMS = [
  "RSASSA_PSS_SHA_512",
  "RSASSA_PSS_SHA_384",
  "RSASSA_PSS_SHA_256",
  "RSASSA_PKCS1_V1_5_SHA_512",
  "RSASSA_PKCS1_V1_5_SHA_384",
  "RSASSA_PKCS1_V1_5_SHA_256",
  "ECDSA_SHA_512",
  "ECDSA_SHA_384",
  "ECDSA_SHA_256",
] as const;
export const KmsSigningAlgorithmSchema = z.enum(KMS_SIGNING_ALGORITHMS);
export type KmsSigningAlgorithm = z.infer<typeof KmsSigningAlgorithmSchema>;

/** The largest payload any operation accepts, decoded. */
export const KMS_MAX_DATA_BYTES = 4096;

// No Buffer here: the contract also runs in the browser.
const base64Bytes = (value: string) => (value.length / 4) * 3 - (value.match(/=+$/)?.[0].length ?? 0);

/** One message for every base64 field, as the reference has it. */
const base64Field = (maxBytes = KMS_MAX_DATA_BYTES) =>
  z
    .string()
    .max(Math.ceil(maxBytes / 3) * 4 + 8, `data cannot exceed ${maxBytes} bytes`)
    .refine(isBase64, "plaintext must be base64 encoded")
    .refine((value) => base64Bytes(value) <= maxBytes, `data cannot exceed ${maxBytes} bytes`);

export const KmsKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  isDisabled: z.boolean(),
  orgId: z.string(),
  projectId: z.string(),
  keyUsage: KmsKeyUsageSchema,
  encryptionAlgorithm: z.string(),
  /** Keyward: the version that encrypts now; every earlier one still decrypts. */
  version: z.number(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type KmsKey = z.infer<typeof KmsKeySchema>;

const KeyNameSchema = slugSchema({ min: 1, max: 32, field: "Name" });
const DescriptionSchema = z.string().trim().max(500);
const ProjectIdSchema = z
  .string({ required_error: "Project ID is required" })
  .trim()
  .min(1, "Project ID is required")
  .max(64);

export const CreateKmsKeyBodySchema = z
  .object({
    projectId: ProjectIdSchema,
    name: KeyNameSchema,
    description: DescriptionSchema.optional(),
    keyUsage: KmsKeyUsageSchema.default("encrypt-decrypt"),
    encryptionAlgorithm: KmsEncryptionAlgorithmSchema.default("aes-256-gcm"),
  })
  .superRefine((body, ctx) => {
    const symmetric = (SYMMETRIC_KMS_ALGORITHMS as readonly string[]).includes(body.encryptionAlgorithm);
    if (body.keyUsage === "encrypt-decrypt" && !symmetric)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["encryptionAlgorithm"],
        message: `encryptionAlgorithm must be a valid symmetric encryption algorithm. Valid options are: ${SYMMETRIC_KMS_ALGORITHMS.join(", ")}`,
      });
    if (body.keyUsage === "sign-verify" && symmetric)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["encryptionAlgorithm"],
        message: `encryptionAlgorithm must be a valid asymmetric sign-verify algorithm. Valid options are: ${ASYMMETRIC_KMS_ALGORITHMS.join(", ")}`,
      });
  });
export type CreateKmsKeyBody = z.infer<typeof CreateKmsKeyBodySchema>;

export const UpdateKmsKeyBodySchema = z.object({
  name: KeyNameSchema.optional(),
  isDisabled: z.boolean().optional(),
  description: DescriptionSchema.optional(),
});
export type UpdateKmsKeyBody = z.infer<typeof UpdateKmsKeyBodySchema>;

export const ListKmsKeysQuerySchema = z.object({
  projectId: ProjectIdSchema,
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(100),
  orderBy: z.enum(["name"]).default("name"),
  orderDirection: z.enum(["asc", "desc"]).default("asc"),
  search: z.string().trim().max(64).optional(),
});
export type ListKmsKeysQuery = z.infer<typeof ListKmsKeysQuerySchema>;

export const KmsSignBodySchema = z.object({
  signingAlgorithm: KmsSigningAlgorithmSchema,
  isDigest: z.boolean().default(false),
  data: base64Field(),
});
export type KmsSignBody = z.infer<typeof KmsSignBodySchema>;
export const KmsVerifyBodySchema = KmsSignBodySchema.extend({ signature: base64Field() });
export type KmsVerifyBody = z.infer<typeof KmsVerifyBodySchema>;

const KeyParams = z.object({ keyId: UuidSchema });
const keyBody = z.object({ key: KmsKeySchema });

/** Customer-managed keys (reference part C). Bodies may carry extra keys (the SDK sends `keyId`): they are stripped. */
export const kmsContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/kms/keys",
    body: CreateKmsKeyBodySchema,
    responses: { 200: keyBody },
    summary: "Create a key in a project",
  },
  list: {
    method: "GET",
    path: "/api/v1/kms/keys",
    query: ListKmsKeysQuerySchema,
    responses: { 200: z.object({ keys: z.array(KmsKeySchema), totalCount: z.number() }) },
    summary: "A project's keys, a page at a time",
  },
  getByName: {
    method: "GET",
    path: "/api/v1/kms/keys/key-name/:keyName",
    pathParams: z.object({ keyName: z.string().min(1).max(64) }),
    query: z.object({ projectId: ProjectIdSchema }),
    responses: { 200: keyBody },
    summary: "A key by name",
  },
  get: {
    method: "GET",
    path: "/api/v1/kms/keys/:keyId",
    pathParams: KeyParams,
    responses: { 200: keyBody },
    summary: "A key by id",
  },
  update: {
    method: "PATCH",
    path: "/api/v1/kms/keys/:keyId",
    pathParams: KeyParams,
    body: UpdateKmsKeyBodySchema,
    responses: { 200: keyBody },
    summary: "Rename, describe, disable or enable a key",
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/kms/keys/:keyId",
    pathParams: KeyParams,
    body: c.noBody(),
    responses: { 200: keyBody },
    summary: "Delete a key and every version of it",
  },
  rotate: {
    method: "POST",
    path: "/api/v1/kms/keys/:keyId/rotate",
    pathParams: KeyParams,
    body: z.object({}).optional(),
    responses: { 200: keyBody },
    summary: "Keyward: a new key version encrypts from now on; older versions still decrypt",
  },
  encrypt: {
    method: "POST",
    path: "/api/v1/kms/keys/:keyId/encrypt",
    pathParams: KeyParams,
    body: z.object({ plaintext: base64Field() }),
    responses: { 200: z.object({ ciphertext: z.string() }) },
    summary: "Encrypt base64 data (at most 4096 bytes)",
  },
  decrypt: {
    method: "POST",
    path: "/api/v1/kms/keys/:keyId/decrypt",
    pathParams: KeyParams,
    // A ciphertext carries its header and tag on top of the 4096-byte payload.
    body: z.object({ ciphertext: base64Field(KMS_MAX_DATA_BYTES + 64) }),
    responses: { 200: z.object({ plaintext: z.string() }) },
    summary: "Decrypt a ciphertext of this key (any version); plaintext comes back base64",
  },
  signingAlgorithms: {
    method: "GET",
    path: "/api/v1/kms/keys/:keyId/signing-algorithms",
    pathParams: KeyParams,
    responses: { 200: z.object({ signingAlgorithms: z.array(KmsSigningAlgorithmSchema) }) },
    summary: "The signing algorithms a sign-verify key supports",
  },
  sign: {
    method: "POST",
    path: "/api/v1/kms/keys/:keyId/sign",
    pathParams: KeyParams,
    body: KmsSignBodySchema,
    responses: {
      200: z.object({ signature: z.string(), keyId: z.string(), signingAlgorithm: KmsSigningAlgorithmSchema }),
    },
    summary: "Sign data or a precomputed digest",
  },
  verify: {
    method: "POST",
    path: "/api/v1/kms/keys/:keyId/verify",
    pathParams: KeyParams,
    body: KmsVerifyBodySchema,
    responses: {
      200: z.object({ signatureValid: z.boolean(), keyId: z.string(), signingAlgorithm: KmsSigningAlgorithmSchema }),
    },
    summary: "Check a signature",
  },
  publicKey: {
    method: "GET",
    path: "/api/v1/kms/keys/:keyId/public-key",
    pathParams: KeyParams,
    responses: { 200: z.object({ publicKey: z.string() }) },
    summary: "The public key: base64 of its DER SubjectPublicKeyInfo",
  },
  privateKey: {
    method: "GET",
    path: "/api/v1/kms/keys/:keyId/private-key",
    pathParams: KeyParams,
    responses: { 200: z.object({ privateKey: z.string() }) },
    summary: "Export the current key material: base64 of PKCS#8 DER, or the raw symmetric key",
  },
});
