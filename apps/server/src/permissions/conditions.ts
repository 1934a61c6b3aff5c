import { globMatcher } from "./glob";
import type { ConditionValue, Conditions, PermissionObject } from "./types";

type FieldValue = PermissionObject[string];

const asList = (value: FieldValue): string[] | undefined => {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [value];
};

const matchElem = (value: FieldValue, spec: Record<string, ConditionValue>) =>
  Array.isArray(value) &&
  value.some((item) => typeof item === "object" && item !== null && matchConditions(spec, item));

/** One field against one condition, with MongoDB semantics for list-valued fields. */
const matchField = (value: FieldValue, condition: ConditionValue): boolean => {
  if (typeof condition === "string") return asList(value)?.includes(condition) ?? false;
  if (condition.$elemMatch !== undefined && !matchElem(value, condition.$elemMatch)) return false;
  const list = Array.isArray(value) && value.some((v) => typeof v !== "string") ? undefined : asList(value);
  if (condition.$eq !== undefined && !(list?.includes(condition.$eq) ?? false)) return false;
  if (condition.$ne !== undefined && (list?.includes(condition.$ne) ?? false)) return false;
  if (condition.$in !== undefined && !(list?.some((v) => condition.$in!.includes(v)) ?? false)) return false;
  if (condition.$all !== undefined && !(list !== undefined && condition.$all.every((v) => list.includes(v))))
    return false;
  if (condition.$glob !== undefined) {
    const matcher = globMatcher(condition.$glob);
    if (!(list?.some((v) => matcher(v)) ?? false)) return false;
  }
  return true;
};

/** Every field must match; a field the object lacks fails its condition (except `$ne`). */
export const matchConditions = (conditions: Conditions, object: PermissionObject): boolean => {
  for (const field in conditions) {
    if (!matchField(object[field], conditions[field]!)) return false;
  }
  return true;
};
