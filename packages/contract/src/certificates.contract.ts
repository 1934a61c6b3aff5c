import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { CertKeyAlgorithmSchema, CertificatePemBundleSchema } from "./certificate-authorities.contract";
import {
  AltNameTypeSchema,
  ExtendedKeyUsageSchema,
  KeyUsageSchema,
  SignatureAlgorithmSchema,
  classifyAltName,
  isValidAltName,
} from "./certificate-profile.schema";
import { MessageSchema, TimestampSchema, pagingQuery } from "./common";
import { parseDuration } from "./duration";

const c = initContract();

export const CertificateStatusSchema = z.enum(["active", "revoked"]);
export const RevocationReasonSchema = z.enum([
  "UNSPECIFIED",
  "KEY_COMPROMISE",
  "CA_COMPROMISE",
  "AFFILIATION_CHANGED",
  "SUPERSEDED",
  "CESSATION_OF_OPERATION",
  "CERTIFICATE_HOLD",
  "PRIVILEGE_WITHDRAWN",
  "A_A_COMPROMISE",
]);
export type RevocationReason = z.infer<typeof RevocationReasonSchema>;

/** "a.example.com, 10.0.0.1, ops@example.com": each entry typed by its shape. */
export const splitAltNames = (altNames: string) =>
  altNames
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);

const AltNamesSchema = z
  .string()
  .trim()
  .max(4096)
  .default("")
  .superRefine((value, ctx) => {
    const names = splitAltNames(value);
    if (names.length > 100) ctx.addIssue({ code: "custom", message: "At most 100 alternative names" });
    for (const name of names) {
      if (!classifyAltName(name))
        ctx.addIssue({ code: "custom", message: `Invalid alternative name: ${name.slice(0, 64)}` });
    }
  });

/** Certificates never outlive a century; beyond that dates stop being representable. */
const MAX_TTL_MS = 36_500 * 24 * 3600 * 1000;

const TtlSchema = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .refine((v) => {
    const ms = parseDuration(v);
    return ms !== undefined && ms >= 1000 && ms <= MAX_TTL_MS;
  }, "TTL must be a duration from one second to 100 years, such as 30d or 12h");

const CommonNameSchema = z.string().trim().min(1).max(64);
const DateTimeSchema = z.string().datetime({ offset: true });

/**
 * The certificate's attributes in the Infisical form (what the Infisical agent sends): typed
 * alternative names, usages, a signature algorithm and an explicit validity window besides the TTL.
 */
export const CertificateAttributesSchema = z
  .object({
    commonName: CommonNameSchema.optional(),
    altNames: z
      .array(
        z
          .object({ type: AltNameTypeSchema, value: z.string().trim().min(1).max(253) })
          .refine((san) => isValidAltName(san.type, san.value), {
            message: "Value does not match its subject alternative name type",
            path: ["value"],
          }),
      )
      .max(100)
      .optional(),
    ttl: TtlSchema.optional(),
    keyAlgorithm: CertKeyAlgorithmSchema.optional(),
    signatureAlgorithm: SignatureAlgorithmSchema.optional(),
    keyUsages: z.array(KeyUsageSchema).max(9).optional(),
    extendedKeyUsages: z.array(ExtendedKeyUsageSchema).max(6).optional(),
    notBefore: DateTimeSchema.optional(),
    notAfter: DateTimeSchema.optional(),
    removeRootsFromChain: z.boolean().optional(),
  })
  .superRefine((a, ctx) => {
    if (a.ttl && a.notAfter)
      ctx.addIssue({ code: "custom", path: ["notAfter"], message: "Give either ttl or notAfter, not both" });
    if (a.notBefore && a.notAfter && Date.parse(a.notBefore) >= Date.parse(a.notAfter))
      ctx.addIssue({ code: "custom", path: ["notAfter"], message: "notAfter must be later than notBefore" });
  });
export type CertificateAttributes = z.infer<typeof CertificateAttributesSchema>;

/** Subject fields that may be given at the top level (Keyward's form) or in `attributes` (Infisical's), not both. */
const TOP_LEVEL_ATTRIBUTES = ["commonName", "altNames", "ttl", "keyAlgorithm"] as const;

export const IssueCertificateBody = z
  .object({
    profileId: z.string().trim().min(1).max(64),
    commonName: CommonNameSchema.optional(),
    altNames: AltNamesSchema,
    ttl: TtlSchema.optional(),
    keyAlgorithm: CertKeyAlgorithmSchema.optional(),
    csr: z.string().trim().min(1).max(32_768).optional(),
    friendlyName: z.string().trim().max(255).optional(),
    attributes: CertificateAttributesSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.csr && (body.keyAlgorithm ?? body.attributes?.keyAlgorithm))
      ctx.addIssue({
        code: "custom",
        path: body.keyAlgorithm ? ["keyAlgorithm"] : ["attributes", "keyAlgorithm"],
        message: "keyAlgorithm comes from the CSR's key when a CSR is given",
      });
    if (!body.attributes) return;
    for (const field of TOP_LEVEL_ATTRIBUTES) {
      if (body[field] !== undefined && body[field] !== "")
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `Give ${field} either at the top level or in attributes, not both`,
        });
    }
  });
export type IssueCertificateBody = z.infer<typeof IssueCertificateBody>;

export const IssuedCertificateSchema = z.object({
  certificateId: z.string(),
  certificate: z.string(),
  issuingCaCertificate: z.string(),
  certificateChain: z.string(),
  /** Only when Keyward generated the key; this is the one time it is returned. */
  privateKey: z.string().optional(),
  serialNumber: z.string(),
});

/**
 * The answer to an issue request in the Infisical form (one that sends `attributes`). Issuance is
 * synchronous, so `certificate` is always present and `certificateRequestId` is the certificate's id.
 * `certificateId` and `serialNumber` are repeated at the top so both answers share them.
 */
export const IssuedCertificateEnvelopeSchema = z.object({
  certificate: IssuedCertificateSchema,
  certificateRequestId: z.string(),
  certificateId: z.string(),
  serialNumber: z.string(),
});

export const CertificateSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  caId: z.string().nullable(),
  profileId: z.string().nullable(),
  status: CertificateStatusSchema,
  serialNumber: z.string(),
  commonName: z.string(),
  altNames: z.string(),
  friendlyName: z.string(),
  keyAlgorithm: CertKeyAlgorithmSchema,
  signatureAlgorithm: z.string(),
  keyUsages: z.array(z.string()),
  extendedKeyUsages: z.array(z.string()),
  notBefore: TimestampSchema,
  notAfter: TimestampSchema,
  revokedAt: TimestampSchema.nullable(),
  revocationReason: RevocationReasonSchema.nullable(),
  hasPrivateKey: z.boolean(),
  renewedFromCertificateId: z.string().nullable(),
  renewedByCertificateId: z.string().nullable(),
  /** Automatic renewal: null until tried, "renewed", or "failed" with `renewalError` (retried with backoff). */
  renewalStatus: z.enum(["renewed", "failed"]).nullable(),
  renewalError: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Certificate = z.infer<typeof CertificateSchema>;

export const ListCertificatesQuery = z.object({
  projectId: z.string().trim().min(1).max(64),
  ...pagingQuery(100, 20),
  profileId: z.string().trim().min(1).max(64).optional(),
  caId: z.string().trim().min(1).max(64).optional(),
  status: CertificateStatusSchema.optional(),
  search: z.string().trim().max(255).optional(),
});
export type ListCertificatesQuery = z.infer<typeof ListCertificatesQuery>;

const CertificateParams = z.object({ certificateId: z.string().trim().min(1).max(64) });

export const RenewCertificateBody = z
  .object({
    removeRootsFromChain: z.boolean().default(false),
    /** A new CSR for the renewed certificate's key; without it Keyward generates a new key pair. */
    csr: z.string().trim().min(1).max(32_768).optional(),
  })
  .default({});
export type RenewCertificateBody = z.infer<typeof RenewCertificateBody>;

export const CertificateKeyBundleSchema = z.object({
  certificate: z.string(),
  certificateChain: z.string().nullable(),
  privateKey: z.string().nullable(),
  serialNumber: z.string(),
});

export const certificatesContract = c.router({
  issue: {
    method: "POST",
    path: "/api/v1/cert-manager/certificates",
    body: IssueCertificateBody,
    // A request with `attributes` is answered in the envelope that Infisical clients read; one with
    // top-level fields keeps the flat answer.
    responses: { 200: z.union([IssuedCertificateSchema, IssuedCertificateEnvelopeSchema]) },
    summary:
      "Issue a certificate through a profile with API enrollment (key generated by Keyward, or from a CSR); with `attributes` the answer is {certificate: {...}, certificateRequestId}",
  },
  list: {
    method: "GET",
    path: "/api/v1/cert-manager/certificates",
    query: ListCertificatesQuery,
    responses: { 200: z.object({ certificates: z.array(CertificateSchema), totalCount: z.number().int() }) },
  },
  get: {
    method: "GET",
    path: "/api/v1/cert-manager/certificates/:certificateId",
    pathParams: CertificateParams,
    responses: { 200: z.object({ certificate: CertificateSchema }) },
  },
  getBundle: {
    method: "GET",
    path: "/api/v1/cert-manager/certificates/:certificateId/certificate",
    pathParams: CertificateParams,
    responses: { 200: CertificatePemBundleSchema },
  },
  getKeyBundle: {
    method: "GET",
    path: "/api/v1/cert-manager/certificates/:certificateId/bundle",
    pathParams: CertificateParams,
    responses: { 200: CertificateKeyBundleSchema },
    summary:
      "Certificate, chain and the stored private key, or null when none is stored (certificates read-private-key)",
  },
  renew: {
    method: "POST",
    path: "/api/v1/cert-manager/certificates/:certificateId/renew",
    pathParams: CertificateParams,
    body: RenewCertificateBody,
    responses: { 200: IssuedCertificateSchema },
    summary:
      "Issue the certificate again with the same subject and names, a new key (or the CSR's), linked to the old one",
  },
  getPrivateKey: {
    method: "GET",
    path: "/api/v1/cert-manager/certificates/:certificateId/private-key",
    pathParams: CertificateParams,
    responses: { 200: z.object({ privateKey: z.string() }) },
    summary: "The stored private key, when the profile keeps keys (certificates read-private-key)",
  },
  revoke: {
    method: "POST",
    path: "/api/v1/cert-manager/certificates/:certificateId/revoke",
    pathParams: CertificateParams,
    body: z.object({ revocationReason: RevocationReasonSchema.default("UNSPECIFIED") }),
    responses: { 200: MessageSchema.extend({ serialNumber: z.string(), revokedAt: TimestampSchema }) },
  },
});
