import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema } from "./common";

const c = initContract();

const StrategySchema = z.enum(["SOFTWARE", "HSM"]);

export const RootKeyRotationSchema = z.object({
  id: z.string(),
  status: z.enum(["running", "completed", "failed"]),
  fromVersion: z.number().int(),
  toVersion: z.number().int(),
  /** Rows sealed under an older version when the rotation started (at least one per project data key). */
  total: z.number().int(),
  /** Rows moved to the new version so far; never above `total`. */
  rewrapped: z.number().int(),
  startedAt: TimestampSchema,
  completedAt: TimestampSchema.nullable(),
  error: z.string().nullable(),
});

/** The instance's root of trust: instance admins only (another caller 403, no token 401). */
export const rootKeysContract = c.router({
  getRootKey: {
    method: "GET",
    path: "/api/v1/admin/root-key",
    responses: {
      200: z.object({
        rootKey: z.object({
          strategy: StrategySchema,
          activeVersion: z.number().int(),
          versions: z.array(
            z.object({
              version: z.number().int(),
              state: z.enum(["active", "retiring", "retired"]),
              createdAt: TimestampSchema,
              retiredAt: TimestampSchema.nullable(),
            }),
          ),
          rotation: RootKeyRotationSchema.nullable(),
        }),
      }),
    },
    summary: "The root key's versions, the seal in use and the latest rotation",
  },
  startRotation: {
    method: "POST",
    path: "/api/v1/admin/root-key/rotations",
    body: z.object({}).strict().optional(),
    responses: { 202: z.object({ rotation: RootKeyRotationSchema }) },
    summary: "Create a new root key version and re-wrap everything under it online (409 while one runs)",
  },
  getRotation: {
    method: "GET",
    path: "/api/v1/admin/root-key/rotations/:rotationId",
    pathParams: z.object({ rotationId: z.string().uuid() }),
    responses: { 200: z.object({ rotation: RootKeyRotationSchema }) },
    summary: "A root key rotation's progress",
  },
  listEncryptionStrategies: {
    method: "GET",
    path: "/api/v1/admin/encryption-strategies",
    responses: {
      200: z.object({ strategies: z.array(z.object({ strategy: StrategySchema, enabled: z.boolean() })) }),
    },
    summary: "The seals of the root key, and which one is in use",
  },
  updateEncryptionStrategy: {
    method: "PATCH",
    path: "/api/v1/admin/encryption-strategies",
    body: z.object({ strategy: StrategySchema }),
    responses: { 200: z.object({ message: z.string(), strategy: StrategySchema }) },
    summary: "Re-seal every live root key version with the other seal (it must be configured on this instance)",
  },
});
