import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";
import { ProjectIdInput } from "./folders.contract";
import { DurationInput, IssuedSchema, ProjectIdParam, SignedSchema, USER_NAME, publicKeyLine } from "./ssh-common";

const c = initContract();

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

/** SSH hosts, people's logins to them, and host groups (part of `contract.ssh`). */
export const sshHostsContract = c.router({
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
