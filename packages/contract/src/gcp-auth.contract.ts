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

export const GcpAuthSchema = AuthConfigCommonSchema.extend({
  type: z.enum(["iam", "gce"]),
  allowedServiceAccounts: z.string(),
  allowedProjects: z.string(),
  allowedZones: z.string(),
});

const Wrapped = z.object({ identityGcpAuth: GcpAuthSchema });

export const gcpAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/gcp-auth/login",
    metadata: { public: true },
    // The GCP JWT is taken as sent (not trimmed), as the reference's schema does.
    body: WorkloadLoginBodySchema.extend({ jwt: z.string().max(32_768) }),
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with a Google-signed ID token (gce) or a service-account-signed JWT (iam)",
  },
  ...identityAuthMethodRoutes({
    slug: "gcp-auth",
    name: "GCP Auth",
    attachBody: authMethodBody({
      type: z.enum(["iam", "gce"]),
      allowedServiceAccounts: commaListSchema().default(""),
      allowedProjects: commaListSchema().default(""),
      allowedZones: commaListSchema().default(""),
      ...authConfigAttachFields,
    }),
    updateBody: authMethodBody({
      type: z.enum(["iam", "gce"]).optional(),
      allowedServiceAccounts: commaListSchema().optional(),
      allowedProjects: commaListSchema().optional(),
      allowedZones: commaListSchema().optional(),
      ...authConfigUpdateFields,
    }),
    response: Wrapped,
  }),
});
