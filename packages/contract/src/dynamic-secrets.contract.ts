import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { parseDuration } from "./duration";
import { DynamicSecretProviderSchema } from "./dynamic-secret-providers.schema";

export * from "./dynamic-secret-providers.schema";

const c = initContract();

const TEN_YEARS_MS = parseDuration("10y")!;

/** A lease or dynamic-secret TTL: an `ms` duration between one minute and ten years. */
export const DynamicSecretTtlSchema = z
  .string()
  .trim()
  .max(64)
  .superRefine((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined)
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "TTL must be a valid duration such as 1h" });
    else if (ms < 60_000) ctx.addIssue({ code: z.ZodIssueCode.custom, message: "TTL must be a greater than 1min" });
    else if (ms > TEN_YEARS_MS)
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "TTL must be less than 10 years" });
  });

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Text PostgreSQL can store: no NUL (text and jsonb) and no lone surrogate (jsonb); else a 422, never a database error. */
export const isStorableText = (value: string) => !value.includes("\u0000") && !LONE_SURROGATE.test(value);
const STORABLE_TEXT = "must not contain NUL characters or unpaired surrogates";

/** A JSON value jsonb accepts, nested at most `maxDepth` levels (deeper ones overflow the stack when serialised). */
export const isStorableJson = (value: unknown, maxDepth = 32): boolean => {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item === "string") {
      if (!isStorableText(item)) return false;
    } else if (item !== null && typeof item === "object") {
      if (depth >= maxDepth) return false;
      for (const [key, child] of Object.entries(item)) {
        if (!isStorableText(key)) return false;
        pending.push([child, depth + 1]);
      }
    }
  }
  return true;
};

const storableText = (schema: z.ZodString) => schema.refine(isStorableText, STORABLE_TEXT);

/** "/a/b/" and "a//b" both become "/a/b"; the root stays "/". */
export const normalizeSecretPath = (path: string) =>
  `/${path
    .split("/")
    .filter((s) => s.length > 0)
    .join("/")}`;

export const DynamicSecretPathSchema = storableText(z.string().trim().max(1024))
  .default("/")
  .transform(normalizeSecretPath);

const MetadataEntry = z.object({
  key: storableText(z.string().trim().min(1, "Metadata key cannot be empty").max(255)),
  value: storableText(z.string().trim().max(1020)).default(""),
});

/** The reference takes `[{key, value}]`; the SDK's type also allows a plain object, so both are read. */
export const DynamicSecretMetadataInputSchema = z
  .union([z.array(MetadataEntry).max(64), z.record(z.string().max(1020))])
  .transform((value) => (Array.isArray(value) ? value : Object.entries(value).map(([key, v]) => ({ key, value: v }))))
  .refine((entries) => entries.length <= 64 && entries.every((e) => e.key.trim().length > 0 && e.key.length <= 255), {
    message: "At most 64 metadata entries with non-empty keys",
  })
  .refine(
    (entries) => entries.every((e) => isStorableText(e.key) && isStorableText(e.value)),
    `Metadata ${STORABLE_TEXT}`,
  );

const USERNAME_TEMPLATE_EXPRESSIONS = ["randomUsername", "unixTimestamp", "identity.name"];

/**
 * Expressions allowed in a username template (reference). Keyward also requires {{randomUsername}}, so
 * every credential carries its lease id and a stray one can always be traced and removed.
 */
export const UsernameTemplateSchema = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9_\-{}.' |]+$/, "Username template contains characters that are not allowed")
  .refine(
    (value) =>
      [...value.matchAll(/{{\s*([^}]*?)\s*}}/g)].every((m) => USERNAME_TEMPLATE_EXPRESSIONS.includes(m[1] ?? "")),
    "Username template may only use {{randomUsername}}, {{unixTimestamp}} and {{identity.name}}",
  )
  .refine((value) => /{{\s*randomUsername\s*}}/.test(value), "Username template must contain {{randomUsername}}");

export const DynamicSecretScopeFields = {
  projectSlug: storableText(z.string().trim().min(1).max(64)),
  environmentSlug: storableText(z.string().trim().min(1).max(64)),
  path: DynamicSecretPathSchema,
};

export const DynamicSecretSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().int(),
  type: z.string(),
  defaultTTL: z.string(),
  maxTTL: z.string().nullable(),
  folderId: z.string().nullable(),
  status: z.string().nullable(),
  statusDetails: z.string().nullable(),
  usernameTemplate: z.string().nullable(),
  projectGatewayId: z.string().nullable(),
  gatewayId: z.string().nullable(),
  gatewayV2Id: z.string().nullable(),
  gatewayPoolId: z.string().nullable(),
  metadata: z.array(z.object({ key: z.string(), value: z.string() })),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type DynamicSecret = z.infer<typeof DynamicSecretSchema>;

/** Inputs come back without their root secrets (passwords, OTP seeds): those are never returned. */
export const DynamicSecretWithInputsSchema = DynamicSecretSchema.extend({ inputs: z.record(z.unknown()) });

export const DynamicSecretLeaseSchema = z.object({
  id: z.string(),
  version: z.number().int(),
  externalEntityId: z.string(),
  expireAt: TimestampSchema,
  dynamicSecretId: z.string(),
  status: z.string().nullable(),
  statusDetails: z.string().nullable(),
  config: z.unknown().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type DynamicSecretLease = z.infer<typeof DynamicSecretLeaseSchema>;

/** A dynamic secret's name as looked up (not as created, which is a slug). */
export const DynamicSecretNameLookupSchema = storableText(z.string().trim().toLowerCase().min(1).max(64));

const NameParams = z.object({ name: DynamicSecretNameLookupSchema });
const ScopeQuery = z.object(DynamicSecretScopeFields);

export const dynamicSecretsContract = c.router({
  create: {
    method: "POST",
    path: "/api/v1/dynamic-secrets",
    body: z.object({
      ...DynamicSecretScopeFields,
      provider: DynamicSecretProviderSchema,
      defaultTTL: DynamicSecretTtlSchema,
      maxTTL: DynamicSecretTtlSchema.nullable().optional(),
      name: slugSchema({ min: 1, max: 64, field: "Name" }),
      metadata: DynamicSecretMetadataInputSchema.optional(),
      usernameTemplate: UsernameTemplateSchema.optional(),
    }),
    responses: { 200: z.object({ dynamicSecret: DynamicSecretWithInputsSchema }) },
    summary: "Create a dynamic secret in a folder",
  },
  update: {
    method: "PATCH",
    path: "/api/v1/dynamic-secrets/:name",
    pathParams: NameParams,
    body: z.object({
      ...DynamicSecretScopeFields,
      data: z.object({
        inputs: z.record(z.unknown()).optional(),
        defaultTTL: DynamicSecretTtlSchema.optional(),
        maxTTL: DynamicSecretTtlSchema.nullable().optional(),
        newName: slugSchema({ min: 1, max: 64, field: "Name" }).optional(),
        metadata: DynamicSecretMetadataInputSchema.optional(),
        usernameTemplate: UsernameTemplateSchema.nullable().optional(),
      }),
    }),
    responses: { 200: z.object({ dynamicSecret: DynamicSecretWithInputsSchema }) },
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/dynamic-secrets/:name",
    pathParams: NameParams,
    body: z.object({ ...DynamicSecretScopeFields, isForced: z.boolean().default(false) }),
    responses: { 200: z.object({ dynamicSecret: DynamicSecretSchema }) },
    summary: "Delete a dynamic secret; its leases are revoked first unless isForced",
  },
  get: {
    method: "GET",
    path: "/api/v1/dynamic-secrets/:name",
    pathParams: NameParams,
    query: ScopeQuery,
    responses: { 200: z.object({ dynamicSecret: DynamicSecretWithInputsSchema }) },
  },
  list: {
    method: "GET",
    path: "/api/v1/dynamic-secrets",
    query: ScopeQuery,
    responses: { 200: z.object({ dynamicSecrets: z.array(DynamicSecretSchema) }) },
  },
  listLeases: {
    method: "GET",
    path: "/api/v1/dynamic-secrets/:name/leases",
    pathParams: NameParams,
    query: ScopeQuery.extend({
      offset: z.coerce.number().int().min(0).max(10_000_000).optional(),
      limit: z.coerce.number().int().min(1).max(1000).optional(),
    }),
    responses: {
      200: z.object({
        leases: z.array(DynamicSecretLeaseSchema),
        /** Every lease of the secret, whatever page was asked for. */
        totalCount: z.number().int(),
      }),
    },
    summary:
      "Leases of a dynamic secret in creation order: all of them without offset/limit (as the reference answers), else one page (limit at most 1000); totalCount counts them all",
  },
});
