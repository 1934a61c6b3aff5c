import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { ProjectIdInput } from "./folders.contract";
import {
  DurationInput,
  IssuedSchema,
  ProjectIdParam,
  SignedSchema,
  SshCertTypeSchema,
  SshKeyAlgorithmSchema,
  SshStatusSchema,
  USER_NAME,
  publicKeyLine,
} from "./ssh-common";
import { sshHostsContract } from "./ssh-hosts.contract";

const c = initContract();

export { SshCertTypeSchema, SshKeyAlgorithmSchema, SshStatusSchema, type SshKeyAlgorithmName } from "./ssh-common";
export { SshHostGroupSchema, SshHostSchema } from "./ssh-hosts.contract";

export const SshCaSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  friendlyName: z.string(),
  status: SshStatusSchema,
  keyAlgorithm: SshKeyAlgorithmSchema,
  keySource: z.enum(["internal", "external"]),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
const SshCaWithKeySchema = SshCaSchema.extend({ publicKey: z.string() });

const HOST_NAME =
  /^(?:\*|(?:\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|[0-9a-f:.]+)$/i;

export const SshTemplateSchema = z.object({
  id: z.string(),
  sshCaId: z.string(),
  status: SshStatusSchema,
  name: z.string(),
  ttl: z.string(),
  maxTTL: z.string(),
  allowedUsers: z.array(z.string()),
  allowedHosts: z.array(z.string()),
  allowUserCertificates: z.boolean(),
  allowHostCertificates: z.boolean(),
  allowCustomKeyIds: z.boolean(),
});

const templateFields = {
  name: slugSchema({ max: 36, field: "Name" }),
  ttl: DurationInput.default("1h"),
  maxTTL: DurationInput.default("1d"),
  allowedUsers: z.array(z.string().trim().max(32).regex(USER_NAME, "Invalid user name")).max(256),
  allowedHosts: z.array(z.string().trim().max(255).regex(HOST_NAME, "Invalid host name")).max(256),
  allowUserCertificates: z.boolean(),
  allowHostCertificates: z.boolean(),
  allowCustomKeyIds: z.boolean(),
};

export const SshCertificateSchema = z.object({
  id: z.string(),
  sshCaId: z.string(),
  sshCertificateTemplateId: z.string().nullable(),
  sshHostId: z.string().nullable(),
  serialNumber: z.string(),
  certType: SshCertTypeSchema,
  principals: z.array(z.string()),
  keyId: z.string(),
  notBefore: TimestampSchema,
  notAfter: TimestampSchema,
  /** Keyward: whether the certificate was taken back, and when. */
  status: z.enum(["active", "revoked"]),
  revokedAt: TimestampSchema.nullable(),
});

const signFields = {
  certificateTemplateId: z.string().trim().min(1).max(64),
  certType: SshCertTypeSchema.default("user"),
  principals: z.array(z.string().trim().max(64)).min(1).max(64),
  ttl: DurationInput.optional(),
  keyId: z.string().trim().max(50).optional(),
};

export const sshContract = c.router({
  createCa: {
    method: "POST",
    path: "/api/v1/ssh/ca",
    body: z.object({
      projectId: ProjectIdInput,
      friendlyName: z.string().trim().min(1).max(128),
      keyAlgorithm: SshKeyAlgorithmSchema.default("ED25519"),
      keySource: z.literal("internal").default("internal"),
    }),
    responses: { 200: z.object({ ca: SshCaWithKeySchema }) },
    summary: "Create an SSH certificate authority (its private key is generated and sealed, never answered)",
  },
  getCa: {
    method: "GET",
    path: "/api/v1/ssh/ca/:sshCaId",
    pathParams: z.object({ sshCaId: z.string().trim().min(1).max(64) }),
    responses: { 200: z.object({ ca: SshCaWithKeySchema }) },
    summary: "An SSH CA with its public key",
  },
  caPublicKey: {
    method: "GET",
    path: "/api/v1/ssh/ca/:sshCaId/public-key",
    metadata: { public: true },
    pathParams: z.object({ sshCaId: z.string().trim().min(1).max(64) }),
    responses: { 200: publicKeyLine },
    summary: "The CA's public key line, for TrustedUserCAKeys or @cert-authority (no authentication)",
  },
  caKrl: {
    method: "GET",
    path: "/api/v1/ssh/ca/:sshCaId/krl",
    metadata: { public: true },
    pathParams: z.object({ sshCaId: z.string().trim().min(1).max(64) }),
    responses: { 200: c.otherResponse({ contentType: "application/octet-stream", body: z.any() }) },
    summary:
      "Keyward: the OpenSSH key revocation list of the CA's revoked certificates, for RevokedKeys (no authentication)",
  },
  updateCa: {
    method: "PATCH",
    path: "/api/v1/ssh/ca/:sshCaId",
    pathParams: z.object({ sshCaId: z.string().trim().min(1).max(64) }),
    body: z.object({ friendlyName: z.string().trim().min(1).max(128).optional(), status: SshStatusSchema.optional() }),
    responses: { 200: z.object({ ca: SshCaWithKeySchema }) },
    summary: "Rename, disable or enable an SSH CA",
  },
  deleteCa: {
    method: "DELETE",
    path: "/api/v1/ssh/ca/:sshCaId",
    pathParams: z.object({ sshCaId: z.string().trim().min(1).max(64) }),
    body: z.object({}).optional(),
    responses: { 200: z.object({ ca: SshCaSchema }) },
    summary: "Delete an SSH CA with its templates and certificate records",
  },
  caTemplates: {
    method: "GET",
    path: "/api/v1/ssh/ca/:sshCaId/certificate-templates",
    pathParams: z.object({ sshCaId: z.string().trim().min(1).max(64) }),
    responses: { 200: z.object({ certificateTemplates: z.array(SshTemplateSchema) }) },
    summary: "The certificate templates of an SSH CA",
  },
  projectCas: {
    method: "GET",
    path: "/api/v1/projects/:projectId/ssh-cas",
    pathParams: ProjectIdParam,
    responses: { 200: z.object({ cas: z.array(SshCaSchema) }) },
    summary: "A project's SSH CAs",
  },
  createTemplate: {
    method: "POST",
    path: "/api/v1/ssh/certificate-templates",
    body: z.object({ sshCaId: z.string().trim().min(1).max(64), ...templateFields }),
    responses: { 200: SshTemplateSchema },
    summary: "Create a certificate template: who and what a CA signs, and for how long",
  },
  getTemplate: {
    method: "GET",
    path: "/api/v1/ssh/certificate-templates/:certificateTemplateId",
    pathParams: z.object({ certificateTemplateId: z.string().trim().min(1).max(64) }),
    responses: { 200: SshTemplateSchema },
    summary: "A certificate template",
  },
  updateTemplate: {
    method: "PATCH",
    path: "/api/v1/ssh/certificate-templates/:certificateTemplateId",
    pathParams: z.object({ certificateTemplateId: z.string().trim().min(1).max(64) }),
    body: z.object({
      name: templateFields.name.optional(),
      ttl: DurationInput.optional(),
      maxTTL: DurationInput.optional(),
      allowedUsers: templateFields.allowedUsers.optional(),
      allowedHosts: templateFields.allowedHosts.optional(),
      allowUserCertificates: z.boolean().optional(),
      allowHostCertificates: z.boolean().optional(),
      allowCustomKeyIds: z.boolean().optional(),
      status: SshStatusSchema.optional(),
    }),
    responses: { 200: SshTemplateSchema },
    summary: "Change a certificate template",
  },
  deleteTemplate: {
    method: "DELETE",
    path: "/api/v1/ssh/certificate-templates/:certificateTemplateId",
    pathParams: z.object({ certificateTemplateId: z.string().trim().min(1).max(64) }),
    body: z.object({}).optional(),
    responses: { 200: SshTemplateSchema },
    summary: "Delete a certificate template",
  },
  projectTemplates: {
    method: "GET",
    path: "/api/v1/projects/:projectId/ssh-certificate-templates",
    pathParams: ProjectIdParam,
    responses: { 200: z.object({ certificateTemplates: z.array(SshTemplateSchema) }) },
    summary: "A project's certificate templates",
  },
  sign: {
    method: "POST",
    path: "/api/v1/ssh/certificates/sign",
    body: z.object({ ...signFields, publicKey: z.string().trim().min(1).max(16_384) }),
    responses: { 200: SignedSchema },
    summary: "Sign a public key with a template's CA",
  },
  issue: {
    method: "POST",
    path: "/api/v1/ssh/certificates/issue",
    body: z.object({ ...signFields, keyAlgorithm: SshKeyAlgorithmSchema.default("ED25519") }),
    responses: { 200: IssuedSchema },
    summary: "Generate a key pair and sign it (the private key is answered once, never stored)",
  },
  revoke: {
    method: "POST",
    path: "/api/v1/ssh/certificates/:certificateId/revoke",
    pathParams: z.object({ certificateId: z.string().trim().min(1).max(64) }),
    body: z.object({ reason: z.string().trim().max(256).optional() }).optional(),
    responses: { 200: z.object({ message: z.string(), serialNumber: z.string(), revokedAt: TimestampSchema }) },
    summary: "Keyward: take a certificate back: its serial joins the CA's revocation list",
  },
  projectCertificates: {
    method: "GET",
    path: "/api/v1/projects/:projectId/ssh-certificates",
    pathParams: ProjectIdParam,
    query: z.object({
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      limit: z.coerce.number().int().min(1).max(100).default(25),
    }),
    responses: { 200: z.object({ certificates: z.array(SshCertificateSchema), totalCount: z.number().int() }) },
    summary: "A project's signed certificates, newest first, with their revocation status",
  },
  ...sshHostsContract,
});
