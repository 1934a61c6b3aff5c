/**
 * How a rule's conditions are evaluated against an object (a secret's environment, path, name and
 * tags…), shared by the server's abilities and the console, which shows only what its caller may do.
 * The glob matcher is given by the caller: the server compiles and caches its own, the browser bundles
 * the same library's POSIX build.
 */

/** A condition on one field: a plain string means equality. */
export type ConditionValue =
  | string
  | {
      $eq?: string;
      $ne?: string;
      $in?: string[];
      $all?: string[];
      $glob?: string;
      $elemMatch?: Record<string, ConditionValue>;
    };

export type Conditions = Record<string, ConditionValue>;

/** What an object-level check is evaluated against: field name to a string or list of strings. */
export type PermissionObject = Record<string, string | string[] | Record<string, string>[] | undefined>;

/** A rule's conditions made ready to evaluate: each `$glob` already compiled. */
export type ConditionsTest = (object: PermissionObject) => boolean;

/** Compiles a path-style glob (`strictSlashes: false`, dot files not matched by wildcards). */
export type GlobCompiler = (pattern: string) => (value: string) => boolean;

type FieldValue = PermissionObject[string];
type FieldTest = (value: FieldValue) => boolean;

const asList = (value: FieldValue): string[] | undefined => {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [value];
};

/** One field against one condition, with MongoDB semantics for list-valued fields. */
const compileField = (condition: ConditionValue, compileGlob: GlobCompiler): FieldTest => {
  if (typeof condition === "string") {
    return (value) => (typeof value === "string" ? value === condition : (asList(value)?.includes(condition) ?? false));
  }
  const { $eq, $ne, $in, $all, $glob } = condition;
  const elem = condition.$elemMatch === undefined ? undefined : compileConditions(condition.$elemMatch, compileGlob);
  const glob = $glob === undefined ? undefined : compileGlob($glob);
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
 * Conditions compiled once (so a check neither looks a glob up nor builds a key): every field must
 * match; a field the object lacks fails its condition (except `$ne`).
 */
export const compileConditions = (conditions: Conditions, compileGlob: GlobCompiler): ConditionsTest => {
  const fields = Object.keys(conditions).map((field) => ({
    field,
    test: compileField(conditions[field]!, compileGlob),
  }));
  return (object) => {
    for (const { field, test } of fields) if (!test(object[field])) return false;
    return true;
  };
};

/** The unpacked rule form: `action` always an array, `inverted` always a boolean. */
export type UnpackedRule = { subject: string; action: string[]; inverted: boolean; conditions?: Conditions };

/** A rule in CASL's packed form: `[actions joined by commas, subject, conditions or 0, 1 when inverted]`, trailing blanks dropped. */
export type PackedRule = (string | number | Conditions)[];

/** Packs rules as CASL's `packRules` does (the permissions route), so a client using CASL reads the same rules. */
export const packRules = (rules: readonly UnpackedRule[]): PackedRule[] =>
  rules.map((rule) => {
    const packed: PackedRule = [rule.action.join(","), rule.subject, rule.conditions ?? 0, rule.inverted ? 1 : 0];
    while (packed.length > 0 && !packed[packed.length - 1]) packed.pop();
    return packed;
  });

/** Unpacks CASL-packed rules (the permissions route's answer); an entry of another shape is skipped. */
export const unpackRules = (packed: readonly (readonly unknown[])[]): UnpackedRule[] =>
  packed.flatMap(([action, subject, conditions, inverted]) =>
    typeof action === "string" && typeof subject === "string"
      ? [
          {
            action: action.split(","),
            subject,
            ...(conditions && typeof conditions === "object" ? { conditions: conditions as Conditions } : {}),
            inverted: inverted === 1 || inverted === true,
          },
        ]
      : [],
  );
