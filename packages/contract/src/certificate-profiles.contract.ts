import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { CaStatusSchema, CertKeyAlgorithmSchema } from "./certificate-authorities.contract";
import {
  AcmeConfigInputSchema,
  ApiConfigInputSchema,
  EnrollmentTypeSchema,
  EstConfigInputSchema,
  EstConfigUpdateSchema,
  IssuerTypeSchema,
  ProfileDefaultsSchema,
  ScepConfigInputSchema,
  scepFields,
} from "./certificate-profile.schema";
import { TimestampSchema, pagingQuery, slugSchema } from "./common";

export * from "./certificate-profile.schema";

const c = initContract();

const ExternalConfigsSchema = z.object({ template: z.string().trim().min(1).max(255).optional() });

export const CertificateProfileSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  caId: z.string().nullable(),
  certificatePolicyId: z.string().nullable(),
  slug: z.string(),
  description: z.string().nullable(),
  enrollmentType: EnrollmentTypeSchema,
  issuerType: IssuerTypeSchema,
  estConfigId: z.string().nullable(),
  apiConfigId: z.string().nullable(),
  acmeConfigId: z.string().nullable(),
  scepConfigId: z.string().nullable(),
  externalConfigs: ExternalConfigsSchema.nullable(),
  defaults: ProfileDefaultsSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  certificateAuthority: z
    .object({
      id: z.string(),
      status: CaStatusSchema,
      name: z.string(),
      isExternal: z.boolean(),
      externalType: z.string().nullable(),
      productNameId: z.string().nullable(),
      keyAlgorithm: CertKeyAlgorithmSchema,
    })
    .optional(),
  metrics: z
    .object({
      profileId: z.string(),
      totalCertificates: z.number().int(),
      activeCertificates: z.number().int(),
      expiredCertificates: z.number().int(),
      expiringCertificates: z.number().int(),
      revokedCertificates: z.number().int(),
    })
    .optional(),
  estConfig: z
    .object({ id: z.string(), disableBootstrapCaValidation: z.boolean(), caChain: z.string().nullable() })
    .optional(),
  apiConfig: z
    .object({
      id: z.string(),
      autoRenew: z.boolean(),
      renewBeforeDays: z.number().int().nullable(),
      storePrivateKey: z.boolean(),
    })
    .optional(),
  acmeConfig: z
    .object({
      id: z.string(),
      directoryUrl: z.string(),
      skipDnsOwnershipVerification: z.boolean(),
      skipEabBinding: z.boolean(),
    })
    .optional(),
  scepConfig: z
    .object({
      id: z.string(),
      scepEndpointUrl: z.string(),
      raCertificatePem: z.string().nullable(),
      raCertExpiresAt: TimestampSchema.nullable(),
      challengeType: z.string(),
      challengeEndpointUrl: z.string().nullable(),
      includeCaCertInResponse: z.boolean(),
      allowCertBasedRenewal: z.boolean(),
      dynamicChallengeExpiryMinutes: z.number().int(),
      dynamicChallengeMaxPending: z.number().int(),
    })
    .optional(),
});
export type CertificateProfile = z.infer<typeof CertificateProfileSchema>;

const CONFIG_KEY = { api: "apiConfig", est: "estConfig", acme: "acmeConfig", scep: "scepConfig" } as const;
const CONFIG_LABEL = { api: "API", est: "EST", acme: "ACME", scep: "SCEP" } as const;

const CreateProfileBody = z
  .object({
    projectId: z.string().trim().min(1).max(64),
    caId: z.string().trim().min(1).max(64).optional(),
    slug: slugSchema({ min: 1, max: 255 }),
    description: z.string().trim().max(1000).optional(),
    enrollmentType: EnrollmentTypeSchema,
    issuerType: IssuerTypeSchema.default("ca"),
    defaults: ProfileDefaultsSchema.optional(),
    externalConfigs: ExternalConfigsSchema.optional(),
    estConfig: EstConfigInputSchema.optional(),
    apiConfig: ApiConfigInputSchema.optional(),
    acmeConfig: AcmeConfigInputSchema.optional(),
    scepConfig: ScepConfigInputSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.issuerType === "ca" && !body.caId) {
      ctx.addIssue({ code: "custom", path: ["caId"], message: "caId is required when issuerType is ca" });
    }
    if (body.issuerType === "self-signed" && body.caId) {
      ctx.addIssue({ code: "custom", path: ["caId"], message: "A self-signed profile cannot have a CA" });
    }
    for (const type of EnrollmentTypeSchema.options) {
      if (type !== body.enrollmentType && body[CONFIG_KEY[type]] !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [CONFIG_KEY[type]],
          message: `${CONFIG_LABEL[type]} configuration cannot be set with ${body.enrollmentType} enrollment`,
        });
      }
    }
    if (
      (body.enrollmentType === "est" || body.enrollmentType === "scep") &&
      body[CONFIG_KEY[body.enrollmentType]] === undefined
    ) {
      ctx.addIssue({
        code: "custom",
        path: [CONFIG_KEY[body.enrollmentType]],
        message: `${CONFIG_LABEL[body.enrollmentType]} enrollment needs ${CONFIG_KEY[body.enrollmentType]}`,
      });
    }
  });
export type CreateProfileBody = z.infer<typeof CreateProfileBody>;

const UpdateProfileBody = z.object({
  slug: slugSchema({ min: 1, max: 255 }).optional(),
  description: z.string().trim().max(1000).nullable().optional(),
  defaults: ProfileDefaultsSchema.nullable().optional(),
  externalConfigs: ExternalConfigsSchema.nullable().optional(),
  estConfig: EstConfigUpdateSchema.optional(),
  apiConfig: ApiConfigInputSchema.optional(),
  acmeConfig: AcmeConfigInputSchema.optional(),
  /** A static challenge left without challengePassword keeps the stored one. */
  scepConfig: z.object(scepFields).optional(),
});
export type UpdateProfileBody = z.infer<typeof UpdateProfileBody>;

export const ListProfilesQuery = z.object({
  /** Keyward scopes the list to one project; the reference's implicit project does not exist here. */
  projectId: z.string().trim().min(1).max(64),
  ...pagingQuery(100, 20),
  enrollmentType: EnrollmentTypeSchema.optional(),
  issuerType: IssuerTypeSchema.optional(),
  caId: z.string().trim().min(1).max(64).optional(),
  search: z.string().trim().max(255).optional(),
});
export type ListProfilesQuery = z.infer<typeof ListProfilesQuery>;

const ProfileParams = z.object({ profileId: z.string().trim().min(1).max(64) });

const EabSecretSchema = z.object({ eabKid: z.string(), eabSecret: z.string() });

export const certificateProfilesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/cert-manager/certificate-profiles",
    body: CreateProfileBody,
    responses: { 200: z.object({ certificateProfile: CertificateProfileSchema }) },
  },
  list: {
    method: "GET",
    path: "/api/v1/cert-manager/certificate-profiles",
    query: ListProfilesQuery,
    responses: {
      200: z.object({ certificateProfiles: z.array(CertificateProfileSchema), totalCount: z.number().int() }),
    },
    summary: "Certificate profiles of a project with their CA, enrollment configuration and certificate metrics",
  },
  getBySlug: {
    method: "GET",
    path: "/api/v1/cert-manager/certificate-profiles/slug/:slug",
    pathParams: z.object({ slug: z.string().trim().min(1).max(255) }),
    query: z.object({ projectId: z.string().trim().min(1).max(64) }),
    responses: { 200: z.object({ certificateProfile: CertificateProfileSchema }) },
  },
  revealAcmeEabSecret: {
    method: "GET",
    path: "/api/v1/cert-manager/certificate-profiles/:profileId/acme/eab-secret/reveal",
    pathParams: ProfileParams,
    responses: { 200: EabSecretSchema },
    summary: "The ACME external account binding key id and HMAC key (certificate-profiles reveal-acme-eab-secret)",
  },
  rotateAcmeEabSecret: {
    method: "POST",
    path: "/api/v1/cert-manager/certificate-profiles/:profileId/acme/eab-secret/rotate",
    pathParams: ProfileParams,
    body: c.noBody(),
    responses: { 200: EabSecretSchema },
    summary: "Replace the ACME external account binding key; accounts already bound stay valid",
  },
  issueScepChallenge: {
    method: "POST",
    path: "/api/v1/cert-manager/certificate-profiles/:profileId/scep/challenges",
    pathParams: ProfileParams,
    body: c.noBody(),
    responses: { 200: z.object({ challenge: z.string(), expiresAt: TimestampSchema }) },
    summary:
      "A one-time SCEP challenge password for a profile with dynamic challenges (needs issue-cert on the profile); shown once",
  },
  get: {
    method: "GET",
    path: "/api/v1/cert-manager/certificate-profiles/:profileId",
    pathParams: ProfileParams,
    responses: { 200: z.object({ certificateProfile: CertificateProfileSchema }) },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/cert-manager/certificate-profiles/:profileId",
    pathParams: ProfileParams,
    body: UpdateProfileBody,
    responses: { 200: z.object({ certificateProfile: CertificateProfileSchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/cert-manager/certificate-profiles/:profileId",
    pathParams: ProfileParams,
    body: c.noBody(),
    responses: { 200: z.object({ certificateProfile: CertificateProfileSchema }) },
  },
});
