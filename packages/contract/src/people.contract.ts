import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { PUBLIC_KEY_JWT_ALGORITHMS } from "./auth-common.schema";
import { MessageSchema, TimestampSchema, rateLimited, slugSchema } from "./common";
import { ProjectPermissionsInputSchema } from "./permission.schema";
// In scope so that declaration files name the rule type here (see privileges.contract.ts).
// eslint-disable-next-line @typescript-eslint/no-unused-vars
import type { ProjectPermissionRule } from "./permission-rule.types";
import { PrivilegeSummarySchema, PrivilegeTypeSchema, PrivilegeWithMembershipSchema } from "./privilege.schema";
import { MembershipRoleSchema } from "./roles.schema";

const c = initContract();

/** A person as the user routes show them (never a password, never a session). */
export const UserSchema = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  isEmailVerified: z.boolean(),
  isAccepted: z.boolean(),
  isMfaEnabled: z.boolean(),
  authMethods: z.array(z.string()),
  superAdmin: z.boolean(),
  isGhost: z.boolean(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type User = z.infer<typeof UserSchema>;

export const UserOrganizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

/** One person's place in an organization: accepted, or an invitation waiting to be claimed. */
export const OrgMembershipSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  role: z.string(),
  status: z.enum(["invited", "accepted"]),
  isActive: z.boolean(),
  inviteEmail: z.string().nullable(),
  user: z
    .object({ id: z.string(), username: z.string(), email: z.string(), firstName: z.string(), lastName: z.string() })
    .nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type OrgMembership = z.infer<typeof OrgMembershipSchema>;

export const UserProjectMembershipSchema = z.object({
  id: z.string(),
  userId: z.string(),
  projectId: z.string(),
  user: z.object({
    id: z.string(),
    username: z.string(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
  }),
  roles: z.array(MembershipRoleSchema),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

const lowerCaseEmail = z
  .string()
  .trim()
  .email()
  .max(320)
  .refine((v) => v === v.toLowerCase(), "Email must be lowercase");
const lowerCaseUsername = z
  .string()
  .trim()
  .min(1)
  .max(320)
  .refine((v) => v === v.toLowerCase(), "Username must be lowercase");
const OrgRoleSlug = z.string().trim().min(1).max(64);
const IdParam = z.string().trim().min(1).max(64);

export const usersContract = c.router({
  me: {
    method: "GET",
    path: "/api/v1/user",
    responses: { 200: z.object({ user: UserSchema.extend({ encryptionVersion: z.number().int() }) }) },
    summary: "The signed-in person",
  },
  meV2: {
    method: "GET",
    path: "/api/v2/users/me",
    responses: { 200: z.object({ user: UserSchema }) },
    summary: "The signed-in person",
  },
  organizations: {
    method: "GET",
    path: "/api/v1/organization",
    responses: { 200: z.object({ organizations: z.array(UserOrganizationSchema) }) },
    summary: "The organizations the caller belongs to",
  },
  revokeMySessions: {
    method: "DELETE",
    path: "/api/v2/users/me/sessions",
    body: c.noBody(),
    responses: { 200: MessageSchema },
    summary: "Sign out everywhere: revoke every session of the signed-in person",
  },
  listOrgMemberships: {
    method: "GET",
    path: "/api/v2/organizations/:orgId/memberships",
    pathParams: z.object({ orgId: IdParam }),
    responses: { 200: z.object({ users: z.array(OrgMembershipSchema) }) },
    summary: "The people of an organization, invitations included",
  },
  updateOrgMembership: {
    method: "PATCH",
    path: "/api/v2/organizations/:orgId/memberships/:membershipId",
    pathParams: z.object({ orgId: IdParam, membershipId: IdParam }),
    body: z.object({ role: OrgRoleSlug.optional(), isActive: z.boolean().optional() }),
    responses: { 200: z.object({ membership: OrgMembershipSchema }) },
    summary: "Change a person's organization role, or (de)activate them",
  },
  deleteOrgMembership: {
    method: "DELETE",
    path: "/api/v2/organizations/:orgId/memberships/:membershipId",
    pathParams: z.object({ orgId: IdParam, membershipId: IdParam }),
    body: c.noBody(),
    responses: { 200: z.object({ membership: OrgMembershipSchema }) },
    summary: "Remove a person (or an invitation) from the organization and all its projects",
  },
  inviteToOrg: {
    method: "POST",
    path: "/api/v1/invite-org/signup",
    body: z.object({
      inviteeEmails: z.array(lowerCaseEmail).min(1).max(100),
      organizationId: IdParam,
      organizationRoleSlug: OrgRoleSlug.default("member"),
      projectIds: z.array(IdParam).max(5).optional(),
    }),
    responses: {
      200: MessageSchema.extend({ completeInviteLinks: z.array(z.object({ email: z.string(), link: z.string() })) }),
    },
    summary: "Invite people by e-mail; each claims the invitation at first sign-in with that verified e-mail",
  },
  inviteProjectMembers: {
    method: "POST",
    path: "/api/v2/workspace/:projectId/memberships",
    pathParams: z.object({ projectId: IdParam }),
    body: z.object({
      emails: z.array(lowerCaseEmail).max(100).default([]),
      usernames: z.array(lowerCaseUsername).max(100).default([]),
      roleSlugs: z.array(z.string().trim().min(1).max(64)).min(1).max(16).optional(),
    }),
    responses: {
      200: z.object({
        memberships: z.array(
          z.object({ id: z.string(), userId: z.string(), projectId: z.string(), createdAt: TimestampSchema }),
        ),
      }),
    },
    summary: "Add organization members to a project",
  },
  removeProjectMembers: {
    method: "DELETE",
    path: "/api/v2/workspace/:projectId/memberships",
    pathParams: z.object({ projectId: IdParam }),
    body: z.object({
      emails: z.array(lowerCaseEmail).max(100).default([]),
      usernames: z.array(lowerCaseUsername).max(100).default([]),
    }),
    responses: {
      200: z.object({
        memberships: z.array(
          z.object({ id: z.string(), userId: z.string(), projectId: z.string(), createdAt: TimestampSchema }),
        ),
      }),
    },
    summary: "Remove people from a project",
  },
  listProjectMemberships: {
    method: "GET",
    path: "/api/v1/workspace/:projectId/memberships",
    pathParams: z.object({ projectId: IdParam }),
    responses: { 200: z.object({ memberships: z.array(UserProjectMembershipSchema) }) },
    summary: "The people of a project with their roles",
  },
});

const OidcConfigFields = {
  configurationType: z.enum(["custom", "discoveryURL"]),
  issuer: z.string().trim().max(1024),
  discoveryURL: z.string().trim().max(1024),
  authorizationEndpoint: z.string().trim().max(1024),
  jwksUri: z.string().trim().max(1024),
  tokenEndpoint: z.string().trim().max(1024),
  userinfoEndpoint: z.string().trim().max(1024),
  clientId: z.string().trim().min(1).max(512),
  clientSecret: z.string().trim().min(1).max(4096),
  isActive: z.boolean(),
  allowedEmailDomains: z.string().trim().max(2048),
  manageGroupMemberships: z.boolean(),
  jwtSignatureAlgorithm: z.enum(PUBLIC_KEY_JWT_ALGORITHMS),
  /** PEM roots for a provider served with a private CA. */
  caCert: z.string().trim().max(65_536).nullable(),
};

/** The configuration as read back: the client secret never leaves the server once stored. */
export const OidcConfigSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  configurationType: z.string(),
  issuer: z.string(),
  discoveryURL: z.string(),
  authorizationEndpoint: z.string(),
  jwksUri: z.string(),
  tokenEndpoint: z.string(),
  userinfoEndpoint: z.string(),
  clientId: z.string(),
  isActive: z.boolean(),
  allowedEmailDomains: z.string(),
  manageGroupMemberships: z.boolean(),
  jwtSignatureAlgorithm: z.string(),
  caCert: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type OidcConfig = z.infer<typeof OidcConfigSchema>;

export const ssoContract = c.router({
  getOidcConfig: {
    method: "GET",
    path: "/api/v1/sso/oidc/config",
    query: z.object({ organizationId: IdParam }),
    responses: { 200: OidcConfigSchema },
    summary: "The organization's OpenID Connect sign-in configuration",
  },
  createOidcConfig: {
    method: "POST",
    path: "/api/v1/sso/oidc/config",
    body: z.object({
      organizationId: IdParam,
      configurationType: OidcConfigFields.configurationType,
      issuer: OidcConfigFields.issuer.default(""),
      discoveryURL: OidcConfigFields.discoveryURL.default(""),
      authorizationEndpoint: OidcConfigFields.authorizationEndpoint.default(""),
      jwksUri: OidcConfigFields.jwksUri.default(""),
      tokenEndpoint: OidcConfigFields.tokenEndpoint.default(""),
      userinfoEndpoint: OidcConfigFields.userinfoEndpoint.default(""),
      clientId: OidcConfigFields.clientId,
      clientSecret: OidcConfigFields.clientSecret,
      isActive: OidcConfigFields.isActive,
      allowedEmailDomains: OidcConfigFields.allowedEmailDomains.default(""),
      manageGroupMemberships: OidcConfigFields.manageGroupMemberships.default(false),
      jwtSignatureAlgorithm: OidcConfigFields.jwtSignatureAlgorithm.default("RS256"),
      caCert: OidcConfigFields.caCert.optional(),
    }),
    responses: { 200: OidcConfigSchema },
    summary: "Configure OpenID Connect sign-in for the organization",
  },
  updateOidcConfig: {
    method: "PATCH",
    path: "/api/v1/sso/oidc/config",
    body: z.object({
      organizationId: IdParam,
      configurationType: OidcConfigFields.configurationType.optional(),
      issuer: OidcConfigFields.issuer.optional(),
      discoveryURL: OidcConfigFields.discoveryURL.optional(),
      authorizationEndpoint: OidcConfigFields.authorizationEndpoint.optional(),
      jwksUri: OidcConfigFields.jwksUri.optional(),
      tokenEndpoint: OidcConfigFields.tokenEndpoint.optional(),
      userinfoEndpoint: OidcConfigFields.userinfoEndpoint.optional(),
      clientId: OidcConfigFields.clientId.optional(),
      clientSecret: OidcConfigFields.clientSecret.optional(),
      isActive: OidcConfigFields.isActive.optional(),
      allowedEmailDomains: OidcConfigFields.allowedEmailDomains.optional(),
      manageGroupMemberships: OidcConfigFields.manageGroupMemberships.optional(),
      jwtSignatureAlgorithm: OidcConfigFields.jwtSignatureAlgorithm.optional(),
      caCert: OidcConfigFields.caCert.optional(),
    }),
    responses: { 200: OidcConfigSchema },
    summary: "Change the organization's OpenID Connect sign-in",
  },
  verifyEmailCode: {
    method: "POST",
    path: "/api/v1/sso/oidc/verify-email",
    metadata: { public: true },
    body: z.object({ code: z.string().regex(/^\d{8}$/, "The code is eight digits") }),
    responses: rateLimited({ 200: z.object({ redirectTo: z.string() }) }),
    summary:
      "Finish a single sign-on that waits for the person to prove their e-mail address: the code mailed to them, from the browser that signed in (its `kw_sso_proof` cookie); sets the refresh cookie and answers where the console goes next",
  },
});

/** Session routes: the refresh token travels only in the `jid` cookie, never in a body or URL. */
export const sessionsContract = c.router({
  refresh: {
    method: "POST",
    path: "/api/v1/auth/token",
    metadata: { public: true },
    body: c.noBody(),
    responses: rateLimited({ 200: z.object({ token: z.string(), expiresIn: z.number().int() }) }),
    summary: "A fresh access token for the session in the refresh cookie (which rotates)",
  },
  logout: {
    method: "POST",
    path: "/api/v1/auth/logout",
    metadata: { public: true },
    body: c.noBody(),
    responses: rateLimited({ 200: MessageSchema }),
    summary: "Sign out: revoke the session of the refresh cookie and clear it",
  },
  cliSession: {
    method: "POST",
    path: "/api/v1/auth/cli-session",
    metadata: { public: true },
    body: c.noBody(),
    responses: rateLimited({
      200: z.object({
        email: z.string(),
        accessToken: z.string(),
        refreshToken: z.string(),
        expiresIn: z.number().int(),
      }),
    }),
    summary:
      "A separate session for the command line, started from the console's session (the refresh cookie); the console hands it to `keyward login`'s loopback listener",
  },
  checkAuth: {
    method: "POST",
    path: "/api/v1/auth/checkAuth",
    body: c.noBody(),
    responses: { 200: MessageSchema },
    summary: "Whether the bearer token is valid",
  },
});

const UserPrivilegeSchema = PrivilegeWithMembershipSchema.extend({ userId: z.string(), projectId: z.string() });
const PrivilegeIdParams = z.object({ privilegeId: IdParam });

/** A person's additional privileges in a project, as identities have them (same rules, same boundary). */
export const userPrivilegesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/user-project-additional-privilege",
    body: z.object({
      projectMembershipId: z.string().trim().min(1).max(64),
      slug: slugSchema({ min: 1, max: 60 }).optional(),
      permissions: ProjectPermissionsInputSchema,
      type: PrivilegeTypeSchema.default({ isTemporary: false }),
    }),
    responses: { 200: z.object({ privilege: UserPrivilegeSchema }) },
    summary: "Grant a person an additional privilege in a project",
  },
  update: {
    method: "PATCH",
    path: "/api/v1/user-project-additional-privilege/:privilegeId",
    pathParams: PrivilegeIdParams,
    body: z.object({
      slug: slugSchema({ min: 1, max: 60 }).optional(),
      permissions: ProjectPermissionsInputSchema.optional(),
      type: PrivilegeTypeSchema.optional(),
    }),
    responses: { 200: z.object({ privilege: UserPrivilegeSchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/user-project-additional-privilege/:privilegeId",
    pathParams: PrivilegeIdParams,
    body: c.noBody(),
    responses: { 200: z.object({ privilege: UserPrivilegeSchema }) },
  },
  list: {
    method: "GET",
    path: "/api/v1/user-project-additional-privilege",
    query: z.object({ projectMembershipId: z.string().trim().min(1).max(64) }),
    responses: {
      200: z.object({
        privileges: z.array(
          PrivilegeSummarySchema.extend({
            userId: z.string(),
            projectId: z.string(),
            isLinkedToAccessApproval: z.boolean(),
          }),
        ),
      }),
    },
  },
  get: {
    method: "GET",
    path: "/api/v1/user-project-additional-privilege/:privilegeId",
    pathParams: PrivilegeIdParams,
    responses: { 200: z.object({ privilege: UserPrivilegeSchema }) },
  },
});
