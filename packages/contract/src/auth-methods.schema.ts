import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { IdentityParams, TTL_ABOVE_MAX_MESSAGE, ttlWithinMax } from "./auth-common.schema";
import { globPatternError } from "./glob-pattern";

const c = initContract();

/** Pieces shared by the LDAP, Kubernetes, OIDC, GCP and Universal Auth contracts. */

export const LoginResponseSchema = z.object({
  accessToken: z.string(),
  expiresIn: z.number().int(),
  accessTokenMaxTTL: z.number().int(),
  tokenType: z.literal("Bearer"),
});

/** The login body of the JWT-carrying workload methods (Kubernetes, GCP, Azure, JWT). */
export const WorkloadLoginBodySchema = z.object({
  identityId: z.string().trim().max(64),
  jwt: z.string().trim().max(32_768),
  organizationSlug: z.string().trim().max(64).optional(),
  subOrganizationName: z.string().trim().max(64).optional(),
});

/** Login lockout settings (reference bounds): defaults on attach, optional on update. */
export const lockoutAttachFields = {
  lockoutEnabled: z.boolean().default(true),
  lockoutThreshold: z.number().int().min(1).max(30).default(3),
  lockoutDurationSeconds: z.number().int().min(30).max(86_400).default(300),
  lockoutCounterResetSeconds: z.number().int().min(5).max(3_600).default(30),
};
export const lockoutUpdateFields = {
  lockoutEnabled: z.boolean().optional(),
  lockoutThreshold: z.number().int().min(1).max(30).optional(),
  lockoutDurationSeconds: z.number().int().min(30).max(86_400).optional(),
  lockoutCounterResetSeconds: z.number().int().min(5).max(3_600).optional(),
};
export const LockoutSettingsSchema = z.object({
  lockoutEnabled: z.boolean(),
  lockoutThreshold: z.number().int(),
  lockoutDurationSeconds: z.number().int(),
  lockoutCounterResetSeconds: z.number().int(),
});

export const ClearLockoutsResponseSchema = z.object({ deleted: z.number().int() });

/** PEM text (CA certificates): bounded, trimmed. */
export const PemSchema = z.string().trim().max(65_536);

// Glob patterns are matched on every login; extglob groups can backtrack for seconds, and so can
// plain wildcards (`*a*a*a*a*b` on a long claim), so patterns pass the same dialect check as `$glob`.
const EXTGLOB = /[@!+*?]\(/;
const EXTGLOB_MESSAGE = "Patterns may not use extglob groups such as +(...) or @(...)";
const globIssue = (pattern: string) =>
  EXTGLOB.test(pattern) ? EXTGLOB_MESSAGE : pattern === "" ? undefined : globPatternError(pattern);
export const GlobPatternSchema = z
  .string()
  .max(256)
  .superRefine((v, ctx) => {
    const message = globIssue(v);
    if (message) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
  });

/** "a, b ,c" -> "a, b, c": comma-separated lists are stored trimmed and joined with ", ". */
export const commaListSchema = (max = 4_096) =>
  z
    .string()
    .trim()
    .max(max)
    .transform((value) =>
      value === ""
        ? ""
        : value
            .split(",")
            .map((entry) => entry.trim())
            .join(", "),
    );

/** A comma-separated list of glob patterns, each checked like GlobPatternSchema. */
export const globListSchema = (max = 4_096) =>
  commaListSchema(max).superRefine((value, ctx) => {
    const message = value
      .split(", ")
      .map((entry) => (entry.length > 256 ? "Glob pattern must be at most 256 characters" : globIssue(entry)))
      .find((issue) => issue !== undefined);
    if (message) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
  });

/** A method's attach or update body: its fields plus the common ones, TTL checked against max TTL. */
export const authMethodBody = <T extends z.ZodRawShape>(shape: T) =>
  z.object(shape).refine(ttlWithinMax, { message: TTL_ABOVE_MAX_MESSAGE, path: ["accessTokenTTL"] });

/**
 * The attach, get, update and revoke routes every method serves at `/api/v1/auth/<slug>/identities/:identityId`.
 * Each method declares only its bodies and response; get and revoke may answer with a different shape.
 */
export const identityAuthMethodRoutes = <
  Slug extends string,
  Attach extends z.ZodTypeAny,
  Update extends z.ZodTypeAny,
  Response extends z.ZodTypeAny,
  GetResponse extends z.ZodTypeAny = Response,
  RevokeResponse extends z.ZodTypeAny = Response,
>(spec: {
  slug: Slug;
  name: string;
  attachBody: Attach;
  updateBody: Update;
  response: Response;
  getResponse?: GetResponse;
  revokeResponse?: RevokeResponse;
}) => {
  const path = `/api/v1/auth/${spec.slug}/identities/:identityId` as const;
  return {
    attach: {
      method: "POST",
      path,
      pathParams: IdentityParams,
      body: spec.attachBody,
      responses: { 200: spec.response },
      summary: `Attach ${spec.name} to an identity`,
    },
    get: {
      method: "GET",
      path,
      pathParams: IdentityParams,
      responses: { 200: (spec.getResponse ?? spec.response) as GetResponse },
    },
    update: {
      method: "PATCH",
      path,
      pathParams: IdentityParams,
      body: spec.updateBody,
      responses: { 200: spec.response },
    },
    revoke: {
      method: "DELETE",
      path,
      pathParams: IdentityParams,
      body: c.noBody(),
      responses: { 200: (spec.revokeResponse ?? spec.response) as RevokeResponse },
    },
  } as const;
};
