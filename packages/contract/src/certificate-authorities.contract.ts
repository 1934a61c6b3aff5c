import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { DateTimeInputSchema, TimestampSchema, pagingQuery, slugSchema } from "./common";

const c = initContract();

/** Key algorithms for CA and certificate keys (the reference's CertKeyAlgorithm values). */
export const CertKeyAlgorithmSchema = z.enum([
  "RSA_2048",
  "RSA_3072",
  "RSA_4096",
  "EC_prime256v1",
  "EC_secp384r1",
  "EC_secp521r1",
]);
export type CertKeyAlgorithm = z.infer<typeof CertKeyAlgorithmSchema>;

export const CaStatusSchema = z.enum(["active", "disabled"]);
export const InternalCaTypeSchema = z.enum(["root", "intermediate"]);

/** X.520 upper bounds for the subject attributes. */
export const subjectFields = {
  commonName: z.string().trim().max(64),
  organization: z.string().trim().max(64),
  organizationalUnit: z.string().trim().max(64),
  country: z
    .string()
    .trim()
    .regex(/^([A-Za-z]{2})?$/, "Country must be a two-letter ISO 3166 code"),
  state: z.string().trim().max(128),
  locality: z.string().trim().max(128),
};

const CaConfigurationInput = z
  .object({
    type: InternalCaTypeSchema,
    friendlyName: z.string().trim().max(255).optional(),
    commonName: subjectFields.commonName.default(""),
    organization: subjectFields.organization.default(""),
    ou: subjectFields.organizationalUnit.default(""),
    country: subjectFields.country.default(""),
    province: subjectFields.state.default(""),
    locality: subjectFields.locality.default(""),
    notBefore: DateTimeInputSchema.optional(),
    notAfter: DateTimeInputSchema.optional(),
    /** -1: no limit on the number of CAs below this one. */
    maxPathLength: z.number().int().min(-1).max(16).default(-1),
    keyAlgorithm: CertKeyAlgorithmSchema.default("RSA_2048"),
    parentCaId: z.string().trim().min(1).max(64).optional(),
  })
  .superRefine((cfg, ctx) => {
    if (![cfg.commonName, cfg.organization, cfg.ou, cfg.country, cfg.province, cfg.locality].some((f) => f !== "")) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message:
          "At least one of the fields commonName, organization, ou, country, province, or locality must be non-empty",
      });
    }
    if (cfg.type === "intermediate" && !cfg.parentCaId) {
      ctx.addIssue({ code: "custom", path: ["parentCaId"], message: "An intermediate CA needs parentCaId" });
    }
    if (cfg.type === "root" && cfg.parentCaId) {
      ctx.addIssue({ code: "custom", path: ["parentCaId"], message: "A root CA cannot have a parent CA" });
    }
    if (cfg.notBefore && cfg.notAfter && new Date(cfg.notBefore) >= new Date(cfg.notAfter)) {
      ctx.addIssue({ code: "custom", path: ["notAfter"], message: "notAfter must be later than notBefore" });
    }
  });
export type CaConfigurationInput = z.infer<typeof CaConfigurationInput>;

export const CertificateAuthoritySchema = z.object({
  id: z.string(),
  projectId: z.string(),
  type: z.literal("internal"),
  name: z.string(),
  status: CaStatusSchema,
  configuration: z.object({
    type: InternalCaTypeSchema,
    friendlyName: z.string().nullable(),
    commonName: z.string(),
    organization: z.string(),
    ou: z.string(),
    country: z.string(),
    province: z.string(),
    locality: z.string(),
    dn: z.string(),
    parentCaId: z.string().nullable(),
    serialNumber: z.string(),
    notBefore: TimestampSchema,
    notAfter: TimestampSchema,
    maxPathLength: z.number().int(),
    keyAlgorithm: CertKeyAlgorithmSchema,
  }),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type CertificateAuthority = z.infer<typeof CertificateAuthoritySchema>;

/** A certificate in PEM with the certificates that signed it, nearest first, up to the root. */
export const CertificatePemBundleSchema = z.object({
  certificate: z.string(),
  certificateChain: z.string(),
  serialNumber: z.string(),
});

const CaParams = z.object({ caId: z.string().trim().min(1).max(64) });
const CaName = slugSchema({ min: 1, max: 64, field: "Name" });

export const certificateAuthoritiesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/cert-manager/ca/internal",
    body: z.object({
      projectId: z.string().trim().min(1).max(64),
      name: CaName,
      status: CaStatusSchema.default("active"),
      configuration: CaConfigurationInput,
    }),
    responses: { 200: z.object({ certificateAuthority: CertificateAuthoritySchema }) },
    summary: "Create an internal root CA, or an intermediate CA signed by another internal CA",
  },
  list: {
    method: "GET",
    path: "/api/v1/cert-manager/ca/internal",
    query: z.object({ projectId: z.string().trim().min(1).max(64), ...pagingQuery() }),
    responses: {
      200: z.object({ certificateAuthorities: z.array(CertificateAuthoritySchema), totalCount: z.number().int() }),
    },
  },
  get: {
    method: "GET",
    path: "/api/v1/cert-manager/ca/internal/:caId",
    pathParams: CaParams,
    responses: { 200: z.object({ certificateAuthority: CertificateAuthoritySchema }) },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/cert-manager/ca/internal/:caId",
    pathParams: CaParams,
    body: z.object({ name: CaName.optional(), status: CaStatusSchema.optional() }),
    responses: { 200: z.object({ certificateAuthority: CertificateAuthoritySchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/cert-manager/ca/internal/:caId",
    pathParams: CaParams,
    body: c.noBody(),
    responses: { 200: z.object({ certificateAuthority: CertificateAuthoritySchema }) },
  },
  getCertificate: {
    method: "GET",
    path: "/api/v1/cert-manager/ca/internal/:caId/certificate",
    pathParams: CaParams,
    responses: { 200: CertificatePemBundleSchema },
    summary: "The CA's certificate and the chain above it",
  },
  getCrl: {
    method: "GET",
    path: "/api/v1/cert-manager/ca/internal/:caId/crl",
    pathParams: CaParams,
    responses: { 200: z.object({ crl: z.string() }) },
    summary: "A freshly signed CRL (PEM) listing the certificates this CA issued and that were revoked",
  },
  renew: {
    method: "POST",
    path: "/api/v1/cert-manager/ca/internal/:caId/renew",
    pathParams: CaParams,
    body: z.object({
      /** Keyward renews a CA with its existing key pair, so certificates it issued verify under both. */
      type: z.literal("existing"),
      notAfter: z
        .string()
        .trim()
        .max(64)
        .refine((v) => !Number.isNaN(Date.parse(v)), "notAfter must be an ISO 8601 date"),
    }),
    responses: {
      200: CertificatePemBundleSchema.extend({ certId: z.string() }),
    },
    summary: "A new certificate for the CA (same key); the previous ones stay listed until they expire",
  },
  listCaCertificates: {
    method: "GET",
    path: "/api/v1/cert-manager/ca/internal/:caId/ca-certificates",
    pathParams: CaParams,
    responses: {
      200: z.array(
        CertificatePemBundleSchema.extend({
          version: z.number().int(),
          notBefore: TimestampSchema,
          notAfter: TimestampSchema,
        }),
      ),
    },
    summary: "Every certificate the CA has had, oldest first (version 1), expired ones left out",
  },
});
