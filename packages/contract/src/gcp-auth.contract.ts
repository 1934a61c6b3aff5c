import { initContract } from "@ts-rest/core";
import { z } from "zod";
import {
  AuthConfigCommonSchema,
  IdentityParams,
  TTL_ABOVE_MAX_MESSAGE,
  authConfigAttachFields,
  authConfigUpdateFields,
  ttlWithinMax,
} from "./auth-common.schema";
import { commaListSchema } from "./auth-methods.schema";

const c = initContract();

export const GcpAuthSchema = AuthConfigCommonSchema.extend({
  type: z.enum(["iam", "gce"]),
  allowedServiceAccounts: z.string(),
  allowedProjects: z.string(),
  allowedZones: z.string(),
});

const Wrapped = z.object({ identityGcpAuth: GcpAuthSchema });

export const gcpAuthContract = c.router({
  attach: {
    method: "POST",
    path: "/api/v1/auth/gcp-auth/identities/:identityId",
    pathParams: IdentityParams,
    body: z
      .object({
        type: z.enum(["iam", "gce"]),
        allowedServiceAccounts: commaListSchema().default(""),
        allowedProjects: commaListSchema().default(""),
        allowedZones: commaListSchema().default(""),
        ...authConfigAttachFields,
      })
      .refine(ttlWithinMax, { message: TTL_ABOVE_MAX_MESSAGE, path: ["accessTokenTTL"] }),
    responses: { 200: Wrapped },
    summary: "Attach GCP Auth to an identity",
  },
  get: {
    method: "GET",
    path: "/api/v1/auth/gcp-auth/identities/:identityId",
    pathParams: IdentityParams,
    responses: { 200: Wrapped },
  },
  update: {
    method: "PATCH",
    path: "/api/v1/auth/gcp-auth/identities/:identityId",
    pathParams: IdentityParams,
    body: z
      .object({
        type: z.enum(["iam", "gce"]).optional(),
        allowedServiceAccounts: commaListSchema().optional(),
        allowedProjects: commaListSchema().optional(),
        allowedZones: commaListSchema().optional(),
        ...authConfigUpdateFields,
      })
      .refine(ttlWithinMax, { message: TTL_ABOVE_MAX_MESSAGE, path: ["accessTokenTTL"] }),
    responses: { 200: Wrapped },
  },
  revoke: {
    method: "DELETE",
    path: "/api/v1/auth/gcp-auth/identities/:identityId",
    pathParams: IdentityParams,
    body: c.noBody(),
    responses: { 200: Wrapped },
  },
});
