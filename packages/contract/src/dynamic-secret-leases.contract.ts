import { initContract } from "@ts-rest/core";
import { z } from "zod";
import {
  DynamicSecretLeaseSchema,
  DynamicSecretNameLookupSchema,
  DynamicSecretSchema,
  DynamicSecretScopeFields,
  DynamicSecretTtlSchema,
  isStorableJson,
  isStorableText,
  normalizeSecretPath,
} from "./dynamic-secrets.contract";

const c = initContract();

const LeaseParams = z.object({ leaseId: z.string().trim().min(1).max(64) });

/** Delete and renew require a non-empty path (reference). */
const ScopeWithPath = {
  ...DynamicSecretScopeFields,
  path: z
    .string()
    .trim()
    .min(1)
    .max(1024)
    .refine(isStorableText, "must not contain NUL characters or unpaired surrogates")
    .default("/")
    .transform(normalizeSecretPath),
};

export const dynamicSecretLeasesContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/dynamic-secrets/leases",
    body: z.object({
      dynamicSecretName: DynamicSecretNameLookupSchema,
      ...DynamicSecretScopeFields,
      ttl: DynamicSecretTtlSchema.optional(),
      config: z
        .any()
        .optional()
        .refine(
          (value) => value === undefined || isStorableJson(value),
          "config must be JSON without NUL characters or unpaired surrogates, nested at most 32 levels",
        ),
    }),
    responses: {
      200: z.object({
        lease: DynamicSecretLeaseSchema,
        dynamicSecret: DynamicSecretSchema,
        data: z.record(z.string()),
      }),
    },
    summary: "Lease credentials from a dynamic secret; they stop working when the lease ends",
  },
  get: {
    method: "GET",
    path: "/api/v1/dynamic-secrets/leases/:leaseId",
    pathParams: LeaseParams,
    query: z.object(DynamicSecretScopeFields),
    responses: { 200: z.object({ lease: DynamicSecretLeaseSchema.extend({ dynamicSecret: DynamicSecretSchema }) }) },
  },
  renew: {
    method: "POST",
    path: "/api/v1/dynamic-secrets/leases/:leaseId/renew",
    pathParams: LeaseParams,
    body: z.object({ ...ScopeWithPath, ttl: DynamicSecretTtlSchema.optional() }),
    responses: { 200: z.object({ lease: DynamicSecretLeaseSchema }) },
    summary: "Extend a lease from its current expiry, bounded by the max TTL from its creation",
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/dynamic-secrets/leases/:leaseId",
    pathParams: LeaseParams,
    body: z.object({ ...ScopeWithPath, isForced: z.boolean().default(false) }),
    responses: { 200: z.object({ lease: DynamicSecretLeaseSchema }) },
    summary: "Revoke a lease; isForced drops it even when the provider cannot be reached",
  },
});
