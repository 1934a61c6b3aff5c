import { z } from "zod";
import { DateTimeInputSchema, TimestampSchema } from "./common";
import { parseDuration } from "./duration";

/** A role assignment on a membership (identity or group): permanent, or temporary from a start for a range. */
export const RoleAssignmentInputSchema = z.discriminatedUnion("isTemporary", [
  z.object({ role: z.string().trim().min(1).max(64), isTemporary: z.literal(false).default(false) }),
  z.object({
    role: z.string().trim().min(1).max(64),
    isTemporary: z.literal(true),
    temporaryMode: z.literal("relative"),
    temporaryRange: z.string().refine((v) => (parseDuration(v) ?? 0) > 0, "Temporary range must be a positive number"),
    temporaryAccessStartTime: DateTimeInputSchema,
  }),
]);
export type RoleAssignmentInput = z.infer<typeof RoleAssignmentInputSchema>;

/** `isTemporary` may be left out for a permanent role. */
export const RoleAssignmentsInputSchema = z
  .array(
    z.preprocess(
      (v) => (v && typeof v === "object" && !("isTemporary" in v) ? { ...v, isTemporary: false } : v),
      RoleAssignmentInputSchema,
    ),
  )
  .min(1)
  .max(32);

export const MembershipRoleSchema = z.object({
  id: z.string(),
  role: z.string(),
  customRoleId: z.string().nullable().optional(),
  customRoleName: z.string().nullable().optional(),
  customRoleSlug: z.string().nullable().optional(),
  isTemporary: z.boolean(),
  temporaryMode: z.string().nullable().optional(),
  temporaryRange: z.string().nullable().optional(),
  temporaryAccessStartTime: TimestampSchema.nullable().optional(),
  temporaryAccessEndTime: TimestampSchema.nullable().optional(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type MembershipRole = z.infer<typeof MembershipRoleSchema>;
