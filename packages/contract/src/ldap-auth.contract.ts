import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import {
  AuthConfigCommonSchema,
  IdentityParams,
  TtlSchema,
  authConfigAttachFields,
  authConfigUpdateFields,
} from "./auth-common.schema";
import {
  ClearLockoutsResponseSchema,
  LockoutSettingsSchema,
  LoginResponseSchema,
  PemSchema,
  authMethodBody,
  identityAuthMethodRoutes,
  lockoutAttachFields,
  lockoutUpdateFields,
} from "./auth-methods.schema";

const c = initContract();

const AllowedFieldSchema = z.object({
  key: z.string().trim().min(1).max(256),
  value: z
    .string()
    .trim()
    .max(2_048)
    .transform((v) => v.replace(/\s/g, "")),
});

/** What every LDAP response carries; the bind DN, password and CA certificate only on GET. */
export const LdapAuthSchema = AuthConfigCommonSchema.extend({
  url: z.string(),
  searchBase: z.string(),
  searchFilter: z.string(),
  allowedFields: z.array(z.object({ key: z.string(), value: z.string() })).nullable(),
  templateId: z.string().nullable(),
}).merge(LockoutSettingsSchema);

export const LdapAuthWithSecretsSchema = LdapAuthSchema.extend({
  bindDN: z.string(),
  bindPass: z.string(),
  ldapCaCertificate: z.string().optional(),
});

const Text = (max: number) => z.string().trim().max(max);
const SearchFilter = z.string().trim().min(1).max(1_024);
const Wrapped = z.object({ identityLdapAuth: LdapAuthSchema });

export const ldapAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/ldap-auth/login",
    metadata: { public: true },
    body: z.object({
      identityId: z.string().trim().uuid("Identity ID must be a valid UUID"),
      username: z.string().trim().min(1, "Username is required").max(256),
      password: z.string().trim().min(1, "Password is required").max(1_024),
      organizationSlug: z.string().trim().max(64).optional(),
    }),
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with an LDAP username and password",
  },
  ...identityAuthMethodRoutes({
    slug: "ldap-auth",
    name: "LDAP Auth",
    attachBody: authMethodBody({
      url: Text(2_048),
      bindDN: Text(1_024),
      bindPass: Text(1_024),
      searchBase: Text(1_024),
      searchFilter: SearchFilter.default("(uid={{username}})"),
      allowedFields: z.array(AllowedFieldSchema).max(32).optional(),
      ldapCaCertificate: PemSchema.optional(),
      ...authConfigAttachFields,
      accessTokenMaxTTL: TtlSchema.min(1).default(2_592_000),
      ...lockoutAttachFields,
    }),
    updateBody: authMethodBody({
      url: Text(2_048).min(1).optional(),
      bindDN: Text(1_024).min(1).optional(),
      bindPass: Text(1_024).min(1).optional(),
      searchBase: Text(1_024).min(1).optional(),
      searchFilter: SearchFilter.optional(),
      allowedFields: z.array(AllowedFieldSchema).max(32).optional(),
      ldapCaCertificate: PemSchema.optional(),
      ...authConfigUpdateFields,
      ...lockoutUpdateFields,
    }),
    response: Wrapped,
    getResponse: z.object({ identityLdapAuth: LdapAuthWithSecretsSchema }),
  }),
  clearLockouts: {
    method: "POST",
    path: "/api/v1/auth/ldap-auth/identities/:identityId/clear-lockouts",
    pathParams: IdentityParams,
    body: c.noBody(),
    responses: { 200: ClearLockoutsResponseSchema },
  },
});
