import { compileConditions as compileWith, type ConditionsTest } from "@keyward/contract";
import { globMatcher } from "./glob";
import type { Conditions, PermissionObject } from "./types";

export type { ConditionsTest };

/**
 * Conditions compiled once with the server's cached glob matchers (an ability does this when it is
 * built): every field must match; a field the object lacks fails its condition (except `$ne`).
 */
export const compileConditions = (conditions: Conditions): ConditionsTest => compileWith(conditions, globMatcher);

/** Every field must match; a field the object lacks fails its condition (except `$ne`). */
export const matchConditions = (conditions: Conditions, object: PermissionObject): boolean =>
  compileConditions(conditions)(object);
