import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { parseDuration } from "./duration";
import { ProjectIdInput } from "./folders.contract";

const c = initContract();

/** Key algorithms of SSH CAs and issued keys. */
export const SshKeyAlgorithmSchema = z.enum(["ED25519", "EC_prime256v1", "EC_secp384r1", "RSA_2048", "RSA_4096"]);
export type SshKeyAlgorithmName = z.infer<typeof SshKeyAlgorithmSchema>;
export const SshStatusSchema = z.enum(["active", "disabled"]);
export const SshCertTypeSchema = z.enum(["user", "host"]);

const ProjectIdParam = z.object({ projectId: ProjectIdInput });

/** A duration as `ms` reads it ("1h", "30d"), positive. */
const DurationInput = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .refine((v) => (parseDuration(v) ?? 0) > 0, "Must be a positive duration such as 1h or 30d");

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

const USER_NAME = /^(?:\*|[a-z_][a-z0-9_-]{0,31})$/i;
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

const SignedSchema = z.object({
  serialNumber: z.string(),
  signedKey: z.string(),
  /** Keyward: the certificate's record, for revocation. */
  certificateId: z.string(),
});

const IssuedSchema = SignedSchema.extend({
  privateKey: z.string(),
  publicKey: z.string(),
  keyAlgorithm: SshKeyAlgorithmSchema,
});

const LoginMappingSchema = z.object({
  loginUser: z.string().trim().min(1).max(32).regex(USER_NAME, "Invalid login user"),
  allowedPrincipals: z
    .object({
      usernames: z.array(z.string().trim().min(1).max(256)).max(256).optional(),
      groups: z.array(z.string().trim().min(1).max(64)).max(256).optional(),
    })
    .refine((p) => (p.usernames?.length ?? 0) + (p.groups?.length ?? 0) > 0, "Name at least one user or group"),
});

export const SshHostSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  hostname: z.string(),
  alias: z.string(),
  userCertTtl: z.string(),
  hostCertTtl: z.string(),
  userSshCaId: z.string(),
  hostSshCaId: z.string(),
  loginMappings: z.array(
    z.object({
      loginUser: z.string(),
      allowedPrincipals: z.object({ usernames: z.array(z.string()), groups: z.array(z.string()) }),
      source: z.enum(["host", "hostGroup"]),
    }),
  ),
});

const FQDN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
const hostFields = {
  hostname: z.string().trim().toLowerCase().max(253).regex(FQDN, "Hostname must be a fully qualified domain name"),
  alias: z
    .string()
    .trim()
    .max(64)
    .regex(/^(?:[a-z0-9]+(?:-[a-z0-9]+)*)?$/, "Alias can only contain letters, numbers, and hyphens"),
  userCertTtl: DurationInput,
  hostCertTtl: DurationInput,
  loginMappings: z.array(LoginMappingSchema).max(256),
};

export const SshHostGroupSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  loginMappings: z.array(
    z.object({
      loginUser: z.string(),
      allowedPrincipals: z.object({ usernames: z.array(z.string()), groups: z.array(z.string()) }),
    }),
  ),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

const hostGroupName = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "Name can only contain lowercase letters, numbers, and hyphens");
const HostGroupIdParam = z.object({ sshHostGroupId: z.string().trim().min(1).max(64) });
const GroupHostParams = HostGroupIdParam.extend({ sshHostId: z.string().trim().min(1).max(64) });

const publicKeyLine = c.otherResponse({ contentType: "text/plain", body: z.string() });

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
  createHost: {
    method: "POST",
    path: "/api/v1/ssh/hosts",
    body: z.object({
      projectId: ProjectIdInput,
      hostname: hostFields.hostname,
      alias: hostFields.alias.default(""),
      userCertTtl: hostFields.userCertTtl.default("1h"),
      hostCertTtl: hostFields.hostCertTtl.default("30d"),
      loginMappings: hostFields.loginMappings.default([]),
      userSshCaId: z.string().trim().min(1).max(64).optional(),
      hostSshCaId: z.string().trim().min(1).max(64).optional(),
    }),
    responses: { 200: SshHostSchema },
    summary: "Register a host (the project's default user and host CAs are created on the first one)",
  },
  loginHosts: {
    method: "GET",
    path: "/api/v1/ssh/hosts",
    responses: { 200: z.array(SshHostSchema) },
    summary:
      "The hosts of the signed-in person's projects they may log in to, each with the login mappings that admit them (people only)",
  },
  issueUserCert: {
    method: "POST",
    path: "/api/v1/ssh/hosts/:sshHostId/issue-user-cert",
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    body: z.object({ loginUser: z.string().trim().min(1).max(32) }),
    responses: { 200: IssuedSchema },
    summary:
      "A fresh ED25519 key and a certificate from the host's user CA for a login user whose mapping admits the signed-in person (people only)",
  },
  getHost: {
    method: "GET",
    path: "/api/v1/ssh/hosts/:sshHostId",
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    responses: { 200: SshHostSchema },
    summary: "A host with its login mappings",
  },
  updateHost: {
    method: "PATCH",
    path: "/api/v1/ssh/hosts/:sshHostId",
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    body: z.object({
      hostname: hostFields.hostname.optional(),
      alias: hostFields.alias.optional(),
      userCertTtl: hostFields.userCertTtl.optional(),
      hostCertTtl: hostFields.hostCertTtl.optional(),
      loginMappings: hostFields.loginMappings.optional(),
    }),
    responses: { 200: SshHostSchema },
    summary: "Change a host (login mappings are replaced whole)",
  },
  deleteHost: {
    method: "DELETE",
    path: "/api/v1/ssh/hosts/:sshHostId",
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    body: z.object({}).optional(),
    responses: { 200: SshHostSchema },
    summary: "Remove a host",
  },
  issueHostCert: {
    method: "POST",
    path: "/api/v1/ssh/hosts/:sshHostId/issue-host-cert",
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    body: z.object({ publicKey: z.string().trim().min(1).max(16_384) }),
    responses: { 200: SignedSchema },
    summary: "Sign the host's own key with its host CA",
  },
  hostUserCaPublicKey: {
    method: "GET",
    path: "/api/v1/ssh/hosts/:sshHostId/user-ca-public-key",
    metadata: { public: true },
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    responses: { 200: publicKeyLine },
    summary: "The public key of the CA that signs users for this host (no authentication)",
  },
  hostHostCaPublicKey: {
    method: "GET",
    path: "/api/v1/ssh/hosts/:sshHostId/host-ca-public-key",
    metadata: { public: true },
    pathParams: z.object({ sshHostId: z.string().trim().min(1).max(64) }),
    responses: { 200: publicKeyLine },
    summary: "The public key of the CA that signs this host's key (no authentication)",
  },
  createHostGroup: {
    method: "POST",
    path: "/api/v1/ssh/host-groups",
    body: z.object({
      projectId: ProjectIdInput,
      name: hostGroupName,
      loginMappings: hostFields.loginMappings.default([]),
    }),
    responses: { 200: SshHostGroupSchema },
    summary: "Create a host group: login mappings its hosts share",
  },
  getHostGroup: {
    method: "GET",
    path: "/api/v1/ssh/host-groups/:sshHostGroupId",
    pathParams: HostGroupIdParam,
    responses: { 200: SshHostGroupSchema },
    summary: "A host group with its login mappings",
  },
  updateHostGroup: {
    method: "PATCH",
    path: "/api/v1/ssh/host-groups/:sshHostGroupId",
    pathParams: HostGroupIdParam,
    body: z.object({ name: hostGroupName.optional(), loginMappings: hostFields.loginMappings.optional() }),
    responses: { 200: SshHostGroupSchema },
    summary: "Rename a host group or replace its login mappings",
  },
  deleteHostGroup: {
    method: "DELETE",
    path: "/api/v1/ssh/host-groups/:sshHostGroupId",
    pathParams: HostGroupIdParam,
    body: z.object({}).optional(),
    responses: { 200: SshHostGroupSchema },
    summary: "Remove a host group (its hosts stay, without its mappings)",
  },
  hostGroupHosts: {
    method: "GET",
    path: "/api/v1/ssh/host-groups/:sshHostGroupId/hosts",
    pathParams: HostGroupIdParam,
    query: z.object({
      filter: z.enum(["group-members", "non-group-members"]).optional(),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(100),
    }),
    responses: {
      200: z.object({
        hosts: z.array(
          z.object({
            id: z.string(),
            hostname: z.string(),
            alias: z.string(),
            isPartOfGroup: z.boolean(),
            joinedGroupAt: TimestampSchema.nullable(),
          }),
        ),
        totalCount: z.number().int(),
      }),
    },
    summary: "The project's hosts with whether each is in the group",
  },
  addHostToGroup: {
    method: "POST",
    path: "/api/v1/ssh/host-groups/:sshHostGroupId/hosts/:sshHostId",
    pathParams: GroupHostParams,
    body: z.object({}).optional(),
    responses: { 200: SshHostSchema },
    summary: "Add a host of the group's project to the group",
  },
  removeHostFromGroup: {
    method: "DELETE",
    path: "/api/v1/ssh/host-groups/:sshHostGroupId/hosts/:sshHostId",
    pathParams: GroupHostParams,
    body: z.object({}).optional(),
    responses: { 200: SshHostSchema },
    summary: "Take a host out of the group",
  },
  projectHostGroups: {
    method: "GET",
    path: "/api/v1/projects/:projectId/ssh-host-groups",
    pathParams: ProjectIdParam,
    responses: { 200: z.object({ groups: z.array(SshHostGroupSchema.extend({ hostCount: z.number().int() })) }) },
    summary: "A project's host groups with how many hosts each holds",
  },
  projectHosts: {
    method: "GET",
    path: "/api/v1/projects/:projectId/ssh-hosts",
    pathParams: ProjectIdParam,
    responses: { 200: z.object({ hosts: z.array(SshHostSchema) }) },
    summary: "A project's hosts",
  },
});
