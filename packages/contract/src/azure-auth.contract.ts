import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import { AuthConfigCommonSchema, authConfigAttachFields, authConfigUpdateFields } from "./auth-common.schema";
import {
  LoginResponseSchema,
  WorkloadLoginBodySchema,
  authMethodBody,
  commaListSchema,
  identityAuthMethodRoutes,
} from "./auth-methods.schema";

const c = initContract();

export const AzureAuthSchema = AuthConfigCommonSchema.extend({
  tenantId: z.string(),
  resource: z.string(),
  allowedServicePrincipalIds: z.string(),
});

// The tenant id is a path segment of the key URL: a GUID or a domain name, nothing else.
const TenantId = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/, "Tenant ID must be a GUID or a domain name");
const Resource = z.string().trim().min(1).max(2_048);

export const azureAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/azure-auth/login",
    metadata: { public: true },
    body: WorkloadLoginBodySchema,
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with an Azure managed-identity access token",
  },
  ...identityAuthMethodRoutes({
    slug: "azure-auth",
    name: "Azure Auth",
    attachBody: authMethodBody({
      tenantId: TenantId,
      resource: Resource,
      allowedServicePrincipalIds: commaListSchema().default(""),
      ...authConfigAttachFields,
    }),
    updateBody: authMethodBody({
      tenantId: TenantId.optional(),
      resource: Resource.optional(),
      allowedServicePrincipalIds: commaListSchema().optional(),
      ...authConfigUpdateFields,
    }),
    response: z.object({ identityAzureAuth: AzureAuthSchema }),
  }),
});
