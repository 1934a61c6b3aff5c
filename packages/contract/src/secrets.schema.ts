import { z } from "zod";
import { TimestampSchema } from "./common";
import { isStorableText } from "./dynamic-secrets.contract";
import { EnvironmentSlugInput, ProjectIdInput, SecretPathSchema } from "./folders.contract";

/** Bounds: names, values, batches, metadata and tags per secret. */
export const MAX_SECRET_NAME_LENGTH = 256;
export const MAX_SECRET_VALUE_BYTES = 1024 * 1024;
export const MAX_SECRET_COMMENT_LENGTH = 10_000;
export const MAX_SECRETS_PER_BATCH = 1000;
export const MAX_TAGS_PER_SECRET = 100;
export const MAX_METADATA_ENTRIES = 64;
export const MAX_METADATA_FILTERS = 10;
/** What a hidden value reads as. */
export const SECRET_VALUE_HIDDEN_MASK = "<hidden-by-infisical>";

/** UTF-8 length without encoding the string (lone surrogates count as the 3 bytes of U+FFFD). */
export const utf8Length = (value: string) => {
  let bytes = 0;
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
};

const SECRET_NAME = /^[A-Za-z0-9_.-]+$/;
const STORABLE = "must not contain NUL characters or unpaired surrogates";

/** A secret's key: letters, digits, `_`, `-` and `.` (the characters a `${…}` reference can name), 1–256 long. */
export const SecretNameSchema = z
  .string()
  .trim()
  .min(1, "Secret name cannot be empty")
  .max(MAX_SECRET_NAME_LENGTH, `Secret name must be at most ${MAX_SECRET_NAME_LENGTH} characters`)
  .regex(SECRET_NAME, "Secret name can only contain letters, numbers, underscores, dashes and dots");

/**
 * A value as stored: trimmed, keeping one final newline when it had one. At most
 * 1 MiB of UTF-8, checked before normalising so the answer does not depend on whitespace.
 */
export const SecretValueSchema = z
  .string()
  .refine((v) => utf8Length(v) <= MAX_SECRET_VALUE_BYTES, {
    message: `Secret value must be at most ${MAX_SECRET_VALUE_BYTES} bytes (1 MiB)`,
  })
  .refine(isStorableText, STORABLE)
  .transform((v) => (v.endsWith("\n") ? `${v.trim()}\n` : v.trim()));

export const SecretCommentSchema = z.string().max(MAX_SECRET_COMMENT_LENGTH).refine(isStorableText, STORABLE);
export const SecretReminderNoteSchema = z
  .string()
  .max(1024, "Secret reminder note cannot exceed 1024 characters")
  .refine(isStorableText, STORABLE)
  .nullable();
export const SecretReminderDaysSchema = z.number().int().min(0).max(36_500).nullable();

export const SecretTypeSchema = z.enum(["shared", "personal"]);
export type SecretType = z.infer<typeof SecretTypeSchema>;

export const SecretMetadataInputSchema = z
  .array(
    z.object({
      key: z.string().trim().min(1).max(255).refine(isStorableText, STORABLE),
      value: z.string().max(1020).refine(isStorableText, STORABLE),
      isEncrypted: z.boolean().default(false),
    }),
  )
  .max(MAX_METADATA_ENTRIES);

export const TagIdsSchema = z.array(z.string().trim().min(1).max(64)).max(MAX_TAGS_PER_SECRET);

/** Query-string booleans are the literal strings "true" and "false". */
export const QueryBoolean = z.enum(["true", "false"]).transform((v) => v === "true");

/** `a, b ,c` → ["a","b","c"]. */
export const TagSlugsQuery = z
  .string()
  .max(4096)
  .transform((v) =>
    v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  )
  .refine((slugs) => slugs.length <= MAX_TAGS_PER_SECRET, `At most ${MAX_TAGS_PER_SECRET} tag slugs`);

export type MetadataFilter = { key?: string; value?: string };

/** `key=K,value=V|key=K2` → [{key:"K",value:"V"},{key:"K2"}]. */
export const MetadataFilterQuery = z
  .string()
  .max(4096)
  .transform((raw, ctx): MetadataFilter[] => {
    const filters = raw
      .split("|")
      .filter((part) => part.trim().length > 0)
      .map((part) => {
        const filter: MetadataFilter = {};
        for (const pair of part.split(",")) {
          const at = pair.indexOf("=");
          if (at < 0) continue;
          const name = pair.slice(0, at).trim();
          const value = pair.slice(at + 1).trim();
          if (name === "key" && value) filter.key = value;
          if (name === "value" && value) filter.value = value;
        }
        return filter;
      });
    if (filters.length > MAX_METADATA_FILTERS) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "You can only filter by up to 10 metadata fields" });
      return z.NEVER;
    }
    if (filters.some((f) => f.key === undefined && f.value === undefined)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          "Invalid secretMetadata format, key or value must be provided. Correct format is key=value1,value=value2|key=value3,value=value4.",
      });
      return z.NEVER;
    }
    return filters;
  });

/** The raw secret; routes extend it with what they declare. */
export const SecretRawSchema = z.object({
  id: z.string(),
  _id: z.string(),
  workspace: z.string(),
  environment: z.string(),
  version: z.number().int(),
  type: z.string(),
  secretKey: z.string(),
  secretValue: z.string(),
  secretComment: z.string(),
  secretReminderNote: z.string().nullable().optional(),
  secretReminderRepeatDays: z.number().nullable().optional(),
  skipMultilineEncoding: z.boolean().nullable().optional(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  actor: z
    .object({
      actorId: z.string().optional(),
      actorType: z.string().optional(),
      name: z.string().optional(),
      membershipId: z.string().optional(),
      groupId: z.string().optional(),
    })
    .nullable()
    .optional(),
  isRotatedSecret: z.boolean().optional(),
  rotationId: z.string().nullable().optional(),
});
export type SecretRaw = z.infer<typeof SecretRawSchema>;

export const SecretTagRefSchema = z.object({
  id: z.string(),
  slug: z.string(),
  color: z.string().nullable().optional(),
  name: z.string(),
});

export const SecretMetadataSchema = z.object({ key: z.string(), value: z.string(), isEncrypted: z.boolean() });

/** What list and get-by-name answer per secret. */
export const SecretReadSchema = SecretRawSchema.extend({
  secretValueHidden: z.boolean(),
  secretPath: z.string(),
  tags: z.array(SecretTagRefSchema),
  secretMetadata: z.array(SecretMetadataSchema),
});
export type SecretRead = z.infer<typeof SecretReadSchema>;

export const SecretByIdSchema = SecretReadSchema.omit({ secretValueHidden: true });
export const SecretWithHiddenSchema = SecretRawSchema.extend({ secretValueHidden: z.boolean() });

export const ImportedSecretSchema = SecretRawSchema.omit({ createdAt: true, updatedAt: true }).extend({
  secretValueHidden: z.boolean(),
  secretMetadata: z.array(SecretMetadataSchema),
});
export const SecretImportResultSchema = z.object({
  secretPath: z.string(),
  environment: z.string(),
  folderId: z.string().optional(),
  secrets: z.array(ImportedSecretSchema),
});
export type SecretImportResult = z.infer<typeof SecretImportResultSchema>;

export const SecretListResponseSchema = z.object({
  secrets: z.array(SecretReadSchema),
  imports: z.array(SecretImportResultSchema),
});
export type SecretListResponse = z.infer<typeof SecretListResponseSchema>;

/** The most secrets one page of the v4 list holds. */
export const MAX_SECRETS_PAGE = 1000;

/**
 * Keyward's paging of the v4 list, both optional: without `limit` the answer is the whole list, as
 * the official clients expect; `offset` alone is refused (400). Pages follow the unpaged order.
 */
export const listPagingFields = {
  offset: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_SECRETS_PAGE).optional(),
};

/**
 * The v4 list's answer: a paged one (`limit` given) adds `totalCount`, the number of the folder's own
 * secrets the caller may see (before paging), and carries the imports on its first page only.
 */
export const SecretListPageSchema = SecretListResponseSchema.extend({ totalCount: z.number().int().optional() });
export type SecretListPage = z.infer<typeof SecretListPageSchema>;

/** Shared pieces of the v3 and v4 inputs. */
export const secretScopeFields = {
  environment: EnvironmentSlugInput,
  secretPath: SecretPathSchema.default("/"),
};
export const optionalProject = ProjectIdInput.optional();

export const listQueryFields = {
  environment: EnvironmentSlugInput.optional(),
  secretPath: SecretPathSchema.default("/"),
  viewSecretValue: QueryBoolean.default("true"),
  expandSecretReferences: QueryBoolean.default("false"),
  recursive: QueryBoolean.default("false"),
  include_imports: QueryBoolean.optional(),
  includeImports: QueryBoolean.optional(),
  includePersonalOverrides: QueryBoolean.optional(),
  tagSlugs: TagSlugsQuery.optional(),
  metadataFilter: MetadataFilterQuery.optional(),
};

export const getQueryFields = {
  environment: EnvironmentSlugInput.optional(),
  secretPath: SecretPathSchema.default("/"),
  version: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
  type: SecretTypeSchema.default("shared"),
  viewSecretValue: QueryBoolean.default("true"),
  expandSecretReferences: QueryBoolean.default("false"),
  include_imports: QueryBoolean.optional(),
  includeImports: QueryBoolean.optional(),
  includePersonalOverrides: QueryBoolean.optional(),
};

export const createBodyFields = {
  ...secretScopeFields,
  secretValue: SecretValueSchema,
  secretComment: SecretCommentSchema.transform((v) => v.trim()).default(""),
  secretMetadata: SecretMetadataInputSchema.optional(),
  tagIds: TagIdsSchema.optional(),
  skipMultilineEncoding: z.boolean().nullable().optional(),
  type: SecretTypeSchema.default("shared"),
  secretReminderRepeatDays: SecretReminderDaysSchema.optional(),
  secretReminderNote: SecretReminderNoteSchema.optional(),
};

export const updateBodyFields = {
  ...secretScopeFields,
  secretValue: SecretValueSchema.optional(),
  secretComment: SecretCommentSchema.optional(),
  secretMetadata: SecretMetadataInputSchema.optional(),
  /** Legacy record the SDK sends; the public routes never return it, so it is accepted and not stored. */
  metadata: z.record(z.string().max(1020)).optional(),
  tagIds: TagIdsSchema.optional(),
  skipMultilineEncoding: z.boolean().nullable().optional(),
  type: SecretTypeSchema.default("shared"),
  newSecretName: z.string().trim().max(MAX_SECRET_NAME_LENGTH).optional(),
  secretReminderRepeatDays: SecretReminderDaysSchema.optional(),
  secretReminderNote: SecretReminderNoteSchema.optional(),
  secretReminderRecipients: z.array(z.string().max(64)).max(100).optional(),
};

export const deleteBodyFields = {
  ...secretScopeFields,
  type: SecretTypeSchema.default("shared"),
  secretName: z.string().max(MAX_SECRET_NAME_LENGTH).optional(),
};

export const BatchCreateItemSchema = z.object({
  secretKey: SecretNameSchema,
  secretValue: SecretValueSchema,
  secretComment: SecretCommentSchema.transform((v) => v.trim()).default(""),
  skipMultilineEncoding: z.boolean().nullable().optional(),
  metadata: z.record(z.string().max(1020)).optional(),
  secretMetadata: SecretMetadataInputSchema.optional(),
  tagIds: TagIdsSchema.optional(),
});

export const BatchUpdateItemSchema = z.object({
  secretKey: SecretNameSchema,
  secretValue: SecretValueSchema.optional(),
  secretPath: SecretPathSchema.optional(),
  secretComment: SecretCommentSchema.transform((v) => v.trim()).optional(),
  skipMultilineEncoding: z.boolean().nullable().optional(),
  newSecretName: SecretNameSchema.optional(),
  tagIds: TagIdsSchema.optional(),
  secretReminderNote: SecretReminderNoteSchema.optional(),
  secretReminderRepeatDays: SecretReminderDaysSchema.optional(),
  secretMetadata: SecretMetadataInputSchema.optional(),
});

export const BatchDeleteItemSchema = z.object({
  secretKey: SecretNameSchema,
  type: SecretTypeSchema.default("shared"),
});

export const SecretUpdateModeSchema = z.enum(["failOnNotFound", "upsert"]);

const batchOf = <T extends z.ZodTypeAny>(item: T) =>
  z.array(item).min(1).max(MAX_SECRETS_PER_BATCH, `At most ${MAX_SECRETS_PER_BATCH} secrets per batch`);

export const batchCreateFields = { ...secretScopeFields, secrets: batchOf(BatchCreateItemSchema) };
export const batchUpdateFields = {
  ...secretScopeFields,
  mode: SecretUpdateModeSchema.default("failOnNotFound"),
  secrets: batchOf(BatchUpdateItemSchema),
};
export const batchDeleteFields = { ...secretScopeFields, secrets: batchOf(BatchDeleteItemSchema) };
