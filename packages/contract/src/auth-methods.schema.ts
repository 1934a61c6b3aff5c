import { z } from "zod";

/** Pieces shared by the LDAP, Kubernetes, OIDC, GCP and Universal Auth contracts. */

export const LoginResponseSchema = z.object({
  accessToken: z.string(),
  expiresIn: z.number().int(),
  accessTokenMaxTTL: z.number().int(),
  tokenType: z.literal("Bearer"),
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

// Glob patterns are matched on every login; extglob groups can backtrack for seconds.
const EXTGLOB = /[@!+*?]\(/;
export const GlobPatternSchema = z
  .string()
  .max(256)
  .refine((v) => !EXTGLOB.test(v), "Patterns may not use extglob groups such as +(...) or @(...)");

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
  commaListSchema(max).refine(
    (value) => value.split(", ").every((entry) => GlobPatternSchema.safeParse(entry).success),
    "Patterns may not use extglob groups such as +(...) or @(...)",
  );
