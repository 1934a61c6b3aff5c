import { z } from "zod";
import { DateTimeInputSchema, TimestampSchema } from "./common";
import { parseDuration } from "./duration";
import { PermissionGlobSchema, MAX_PERMISSION_RULES, PermissionRuleSchema } from "./permission.schema";
import {
  PROJECT_PERMISSION_CATALOG,
  PROJECT_PERMISSION_CONDITIONS,
  PROJECT_PERMISSION_SUBJECTS,
} from "./permission-catalog";

/** Temporary windows end at start + range; a range beyond a thousand years cannot be a date. */
const MAX_TEMPORARY_RANGE_MS = 1000 * 31_557_600_000;

export const TemporaryRangeSchema = z
  .string()
  .max(64)
  .refine((v) => (parseDuration(v) ?? 0) > 0, "Temporary range must be a positive number")
  .refine((v) => (parseDuration(v) ?? 0) <= MAX_TEMPORARY_RANGE_MS, "Temporary range must be at most 1000 years");

export const TemporaryModeSchema = z.enum(["relative"]);

/** v2 `type`: permanent, or temporary from a start for a range. */
export const PrivilegeTypeSchema = z.discriminatedUnion("isTemporary", [
  z.object({ isTemporary: z.literal(false) }),
  z.object({
    isTemporary: z.literal(true),
    temporaryMode: TemporaryModeSchema,
    temporaryRange: TemporaryRangeSchema,
    temporaryAccessStartTime: DateTimeInputSchema,
  }),
]);
export type PrivilegeType = z.infer<typeof PrivilegeTypeSchema>;

const privilegeFields = {
  id: z.string(),
  slug: z.string(),
  permissions: z.array(PermissionRuleSchema),
  isTemporary: z.boolean(),
  temporaryMode: z.string().nullable(),
  temporaryRange: z.string().nullable(),
  temporaryAccessStartTime: TimestampSchema.nullable(),
  temporaryAccessEndTime: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
};

/** The v2 create response shape has no `projectMembershipId`. */
export const PrivilegeSchema = z.object(privilegeFields);
/** Every other privilege response carries the identity's project membership id. */
export const PrivilegeWithMembershipSchema = z.object({ ...privilegeFields, projectMembershipId: z.string() });
export type PrivilegeDto = z.infer<typeof PrivilegeWithMembershipSchema>;
/** The v2 list leaves the rules out. */
export const PrivilegeSummarySchema = PrivilegeWithMembershipSchema.omit({ permissions: true });

// ---- v1 legacy permission forms ----

const LEGACY_ACTIONS = ["read", "create", "edit", "delete"] as const;
const SecretPathCondition = z.union([
  z
    .string()
    .min(1)
    .max(512)
    .refine((v) => v.startsWith("/"), "Invalid Secret Path; it must start with a '/'"),
  z.object({ $glob: PermissionGlobSchema }).strict(),
]);
const LegacyConditionsSchema = z
  .object({ environment: z.string().trim().min(1).max(64).optional(), secretPath: SecretPathCondition.optional() })
  .strict();

export const LegacyPermissionSchema = z
  .object({
    action: z.enum(LEGACY_ACTIONS),
    subject: z.enum(PROJECT_PERMISSION_SUBJECTS as [string, ...string[]]),
    conditions: LegacyConditionsSchema.optional(),
  })
  .superRefine((rule, ctx) => {
    const actions = PROJECT_PERMISSION_CATALOG[
      rule.subject as keyof typeof PROJECT_PERMISSION_CATALOG
    ] as readonly string[];
    if (!actions.includes(rule.action)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["action"],
        message: `Action ${rule.action} is not valid for subject ${rule.subject}`,
      });
    }
    const keys = PROJECT_PERMISSION_CONDITIONS[rule.subject as keyof typeof PROJECT_PERMISSION_CONDITIONS] ?? {};
    for (const key of Object.keys(rule.conditions ?? {})) {
      if (!(key in keys)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["conditions", key],
          message: `Condition ${key} is not valid for subject ${rule.subject}`,
        });
      }
    }
  });
export type LegacyPermission = z.infer<typeof LegacyPermissionSchema>;

export const PrivilegePermissionSchema = z.object({
  actions: z.array(z.enum(LEGACY_ACTIONS)).min(1).max(4),
  subject: z.literal("secrets"),
  conditions: z
    .object({ environment: z.string().trim().min(1).max(64), secretPath: SecretPathCondition.optional() })
    .strict(),
});
export type PrivilegePermission = z.infer<typeof PrivilegePermissionSchema>;

export const LegacyPermissionsSchema = z.array(LegacyPermissionSchema).max(MAX_PERMISSION_RULES);
