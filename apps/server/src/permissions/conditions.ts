import { globMatcher } from "./glob";
import type { ConditionValue, Conditions, PermissionObject } from "./types";

type FieldValue = PermissionObject[string];
type FieldTest = (value: FieldValue) => boolean;
/** A rule's conditions made ready to evaluate: each `$glob` already compiled. */
export type ConditionsTest = (object: PermissionObject) => boolean;

const asList = (value: FieldValue): string[] | undefined => {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [value];
};

/** One field against one condition, with MongoDB semantics for list-valued fields. */
const compileField = (condition: ConditionValue): FieldTest => {
  if (typeof condition === "string") {
    return (value) => (typeof value === "string" ? value === condition : (asList(value)?.includes(condition) ?? false));
  }
  const { $eq, $ne, $in, $all, $glob } = condition;
  const elem = condition.$elemMatch === undefined ? undefined : compileConditions(condition.$elemMatch);
  const glob = $glob === undefined ? undefined : globMatcher($glob);
  return (value) => {
    // A plain string (the usual field) is the one-element list, without building it.
    if (typeof value === "string") {
      if (elem !== undefined) return false;
      if ($eq !== undefined && value !== $eq) return false;
      if ($ne !== undefined && value === $ne) return false;
      if ($in !== undefined && !$in.includes(value)) return false;
      if ($all !== undefined && !$all.every((v) => v === value)) return false;
      return glob === undefined || glob(value);
    }
    if (elem !== undefined) {
      const matched =
        Array.isArray(value) && value.some((item) => typeof item === "object" && item !== null && elem(item));
      if (!matched) return false;
    }
    const list = Array.isArray(value) && value.some((v) => typeof v !== "string") ? undefined : asList(value);
    if ($eq !== undefined && !(list?.includes($eq) ?? false)) return false;
    if ($ne !== undefined && (list?.includes($ne) ?? false)) return false;
    if ($in !== undefined && !(list?.some((v) => $in.includes(v)) ?? false)) return false;
    if ($all !== undefined && !(list !== undefined && $all.every((v) => list.includes(v)))) return false;
    if (glob !== undefined && !(list?.some((v) => glob(v)) ?? false)) return false;
    return true;
  };
};

/**
 * Conditions compiled once (an ability does this when it is built, so a check neither looks a glob
 * up nor builds a key): every field must match; a field the object lacks fails its condition
 * (except `$ne`).
 */
export const compileConditions = (conditions: Conditions): ConditionsTest => {
  const fields = Object.keys(conditions).map((field) => ({ field, test: compileField(conditions[field]!) }));
  return (object) => {
    for (const { field, test } of fields) if (!test(object[field])) return false;
    return true;
  };
};

/** Every field must match; a field the object lacks fails its condition (except `$ne`). */
export const matchConditions = (conditions: Conditions, object: PermissionObject): boolean =>
  compileConditions(conditions)(object);
