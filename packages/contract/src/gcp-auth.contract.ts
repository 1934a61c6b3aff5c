import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { AuthConfigCommonSchema, authConfigAttachFields, authConfigUpdateFields } from "./auth-common.schema";
import { authMethodBody, commaListSchema, identityAuthMethodRoutes } from "./auth-methods.schema";

const c = initContract();

export const GcpAuthSchema = AuthConfigCommonSchema.extend({
  type: z.enum(["iam", "gce"]),
  allowedServiceAccounts: z.string(),
  allowedProjects: z.string(),
  allowedZones: z.string(),
});

const Wrapped = z.object({ identityGcpAuth: GcpAuthSchema });

export const gcpAuthContract = c.router(
  identityAuthMethodRoutes({
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
);
