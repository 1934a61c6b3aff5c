import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { SecretRawSchema, SecretWithHiddenSchema } from "./secrets.schema";
import { ChangeRequestSchema } from "./secret-approvals.contract";

const c = initContract();

const SecretIdParam = z.object({ secretId: z.string().trim().min(1).max(64) });

/** One recorded version: `id` is the version row, `version` its number; `isDeleted` marks a deletion. */
export const SecretVersionSchema = SecretRawSchema.extend({
  secretId: z.string(),
  secretValueHidden: z.boolean(),
  isDeleted: z.boolean(),
});
export type SecretVersion = z.infer<typeof SecretVersionSchema>;

export const secretVersionsContract = c.router({
  list: {
    method: "GET",
    path: "/api/v1/secret/:secretId/secret-versions",
    pathParams: SecretIdParam,
    query: z.object({
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
    responses: { 200: z.object({ secretVersions: z.array(SecretVersionSchema) }) },
    summary: "A secret's recorded versions, newest first (values masked without read-value permission)",
  },
  rollback: {
    method: "POST",
    path: "/api/v1/secret/:secretId/secret-versions/:version/rollback",
    pathParams: SecretIdParam.extend({ version: z.coerce.number().int().min(1).max(2_147_483_647) }),
    body: z.object({}).optional(),
    responses: {
      200: z.union([z.object({ secret: SecretWithHiddenSchema }), z.object({ approval: ChangeRequestSchema })]),
    },
    summary:
      "Keyward: restore one secret (value, comment, name, tags, metadata) to a recorded version, recording it as a new version; in a folder a change policy protects, a change request instead",
  },
});
