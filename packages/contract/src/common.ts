import { z } from "zod";

/** One zod issue as a 422 body carries it in `message`. */
export const ValidationIssueSchema = z
  .object({ code: z.string(), path: z.array(z.union([z.string(), z.number()])), message: z.string() })
  .passthrough();
export type ValidationIssue = z.infer<typeof ValidationIssueSchema>;

/** Error bodies, spec part 7. `message` is a string except for 422, where it is the zod issues. */
export const ErrorBodySchema = z.object({
  reqId: z.string(),
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(ValidationIssueSchema)]),
  error: z.string(),
  details: z.unknown().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Declared once on the root contract so every route's client type knows the error bodies. */
export const commonResponses = {
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  403: ErrorBodySchema,
  404: ErrorBodySchema,
  /** A concurrent change won (serialization failure or deadlock); nothing was written, retry. */
  409: ErrorBodySchema,
  413: ErrorBodySchema,
  415: ErrorBodySchema,
  422: ErrorBodySchema,
  500: ErrorBodySchema,
  /** The database cannot be reached or did not answer in time; `Retry-After` says when to try again. */
  503: ErrorBodySchema,
} as const;

/**
 * The responses of a rate-limited route (logins, token renewal and revocation, secret reads) plus its
 * 429 past the per-client limit, with `Retry-After`. A function, not a spread: spreading `{ 429: … }`
 * would turn the key into the string "429" and the client would not narrow on it.
 */
export const rateLimited = <T extends Record<number, unknown>>(responses: T): T & { 429: typeof ErrorBodySchema } => ({
  ...responses,
  429: ErrorBodySchema,
});

/** Timestamps leave the server as ISO 8601 strings. */
export const TimestampSchema = z.string();
export const UuidSchema = z.string().uuid();

/** Lower-case and trim first, then check length and shape. */
export const slugSchema = ({
  min = 1,
  max = 60,
  field = "Slug",
}: { min?: number; max?: number; field?: string } = {}) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .min(min, `${field} field must be at least ${min} character${min === 1 ? "" : "s"}`)
    .max(max, `${field} field must be at most ${max} characters`)
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, `${field} field can only contain letters, numbers, and hyphens`);

export const MetadataInputSchema = z
  .array(
    z.object({
      key: z.string().trim().min(1, "Metadata key cannot be empty").max(255),
      value: z.string().trim().min(1, "Metadata value cannot be empty").max(1020),
    }),
  )
  .max(64);

export const MetadataSchema = z.object({ id: z.string(), key: z.string(), value: z.string() });

export const MessageSchema = z.object({ message: z.string() });

/** ISO-8601 in UTC with a Z suffix, as `z.string().datetime()` accepts. */
export const DateTimeInputSchema = z.string().datetime();

/** Query-string paging shared by list endpoints. */
export const pagingQuery = (maxLimit = 100, defaultLimit = 20) => ({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
});
