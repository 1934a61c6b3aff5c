import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";

const c = initContract();

const IdParam = z.string().trim().min(1).max(64);

/** A SCIM token as listed: never the token itself, which is shown once when it is created. */
export const ScimTokenSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  description: z.string(),
  ttlDays: z.number().int(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type ScimToken = z.infer<typeof ScimTokenSchema>;

export const scimContract = c.router({
  createScimToken: {
    method: "POST",
    path: "/api/v1/scim/scim-tokens",
    body: z.object({
      organizationId: IdParam,
      description: z.string().trim().max(256).default(""),
      ttlDays: z.number().int().min(0).max(730).default(0),
    }),
    responses: { 200: z.object({ scimToken: z.string() }) },
    summary: "Create a SCIM token for an organization's identity provider (shown once; 0 days never expires)",
  },
  listScimTokens: {
    method: "GET",
    path: "/api/v1/scim/scim-tokens",
    query: z.object({ organizationId: IdParam }),
    responses: { 200: z.object({ scimTokens: z.array(ScimTokenSchema) }) },
    summary: "The SCIM tokens of an organization",
  },
  deleteScimToken: {
    method: "DELETE",
    path: "/api/v1/scim/scim-tokens/:scimTokenId",
    pathParams: z.object({ scimTokenId: IdParam }),
    body: c.noBody(),
    responses: { 200: z.object({ scimToken: ScimTokenSchema }) },
    summary: "Delete a SCIM token: the identity provider can no longer provision with it",
  },
});
