import { z } from "zod";
import { globPatternError } from "./glob-pattern";
import { invalidTemplateExpression, withoutTemplates } from "./permission-template";
import type { ProjectPermissionRule } from "./permission-rule.types";
import {
  PROJECT_PERMISSION_CATALOG,
  PROJECT_PERMISSION_CONDITIONS,
  PROJECT_PERMISSION_SUBJECTS,
  type ConditionFieldSpec,
  type ProjectPermissionSubject,
} from "./permission-catalog";

/** Bounds on one rule set: rules per role or privilege, values per `$in`/`$all`, value length. */
export const MAX_PERMISSION_RULES = 1000;
export const MAX_CONDITION_LIST = 256;
const MAX_VALUE_LENGTH = 512;

/** A stored rule as it leaves the server: `action` always a list, `inverted` always set. */
export const PermissionRuleSchema = z.object({
  subject: z.string(),
  action: z.array(z.string()),
  inverted: z.boolean(),
  conditions: z.record(z.unknown()).optional(),
});
export type PermissionRuleDto = z.infer<typeof PermissionRuleSchema>;

/** The normalised request form every rule schema produces. */
export type PermissionRuleInput = {
  subject: string;
  action: string[];
  inverted: boolean;
  conditions?: Record<string, unknown>;
};

const SECRET_PATH_MESSAGE = "Invalid Secret Path; it must start with a '/'";
const value = z.string().min(1).max(MAX_VALUE_LENGTH);
const pathValue = value.refine((v) => v.startsWith("/"), SECRET_PATH_MESSAGE);

export const PermissionGlobSchema = z.string().superRefine((pattern, ctx) => {
  // An identity template is filled in with a literal value, so it is checked as one literal character.
  const message = globPatternError(withoutTemplates(pattern));
  if (message) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
});

const operatorSchemas = (spec: ConditionFieldSpec) => {
  const scalar = spec.path ? pathValue : value;
  const list = z.array(scalar).max(MAX_CONDITION_LIST);
  const all: Record<string, z.ZodTypeAny> = {
    $eq: scalar,
    $ne: scalar,
    $in: list,
    $all: z.array(value).max(MAX_CONDITION_LIST),
    $glob: PermissionGlobSchema,
  };
  return Object.fromEntries(spec.operators.filter((op) => op in all).map((op) => [op, all[op]!.optional()]));
};

const nonEmptyOperators = (v: Record<string, unknown>) => Object.values(v).some((x) => x !== undefined);
const NO_OPERATOR = "At least one condition operator is required";

const elemMatchField = z
  .object({
    $elemMatch: z
      .object({
        key: z.union([value, z.object(operatorSchemas({ operators: ["$eq", "$ne", "$in"] })).strict()]).optional(),
        value: z.union([value, z.object(operatorSchemas({ operators: ["$eq", "$ne", "$in"] })).strict()]).optional(),
      })
      .strict()
      .refine(nonEmptyOperators, NO_OPERATOR),
  })
  .strict();

/** One field's condition: a plain string (equality) or an object of the operators it allows. */
const conditionFieldSchema = (spec: ConditionFieldSpec): z.ZodTypeAny => {
  if (spec.operators.includes("$elemMatch")) return elemMatchField;
  const operators = z.object(operatorSchemas(spec)).strict().refine(nonEmptyOperators, NO_OPERATOR);
  const allowsPlain = spec.operators.includes("$eq");
  return allowsPlain ? z.union([spec.path ? pathValue : value, operators]) : operators;
};

export const conditionsSchemaFor = (subject: ProjectPermissionSubject) => {
  const table: Partial<Record<ProjectPermissionSubject, Record<string, ConditionFieldSpec>>> =
    PROJECT_PERMISSION_CONDITIONS;
  const fields = table[subject] ?? {};
  const shape = Object.fromEntries(
    Object.entries(fields).map(([name, spec]) => [name, conditionFieldSchema(spec).optional()]),
  );
  // Unknown condition keys are refused rather than dropped: dropping one would widen the grant.
  return z.object(shape).strict();
};

const actionSchemaFor = (subject: ProjectPermissionSubject) => {
  const actions = PROJECT_PERMISSION_CATALOG[subject] as unknown as [string, ...string[]];
  const one = z.enum(actions);
  return z.union([
    one,
    z
      .array(one)
      .min(1)
      .max(actions.length * 2),
  ]);
};

const ruleVariant = <S extends ProjectPermissionSubject>(subject: S) =>
  z.object({
    subject: z.literal(subject),
    action: actionSchemaFor(subject),
    inverted: z.boolean().optional(),
    conditions: conditionsSchemaFor(subject).optional(),
  });

const variants = PROJECT_PERMISSION_SUBJECTS.map((s) => ruleVariant(s)) as unknown as [
  ReturnType<typeof ruleVariant<ProjectPermissionSubject>>,
  ...ReturnType<typeof ruleVariant<ProjectPermissionSubject>>[],
];

type RawRule = { subject: string; action: string | string[]; inverted?: boolean; conditions?: Record<string, unknown> };

/** Request form → stored form: action as a de-duplicated list, inverted explicit, no empty conditions. */
export const normalizeRule = (rule: RawRule): PermissionRuleInput => {
  const action = [...new Set(Array.isArray(rule.action) ? rule.action : [rule.action])];
  const conditions = rule.conditions
    ? Object.fromEntries(Object.entries(rule.conditions).filter(([, v]) => v !== undefined))
    : undefined;
  return {
    subject: rule.subject,
    action,
    inverted: rule.inverted ?? false,
    ...(conditions && Object.keys(conditions).length > 0 ? { conditions } : {}),
  };
};

/**
 * A project permission rule, request form: one variant per subject of the catalogue,
 * each with its own actions and condition keys. Unknown subjects or actions and `action: []` are 422.
 * The variants are built from the catalogue at run time; the input type states the same catalogue
 * per subject (`ProjectPermissionRule`), so callers get the exact rule type, checked by a type test.
 */
export const ProjectPermissionInputSchema = z
  .discriminatedUnion("subject", variants)
  .transform((rule): PermissionRuleInput => normalizeRule(rule as RawRule)) as unknown as z.ZodType<
  PermissionRuleInput,
  z.ZodTypeDef,
  ProjectPermissionRule
>;

export const ProjectPermissionsInputSchema = z.array(ProjectPermissionInputSchema).max(MAX_PERMISSION_RULES);

/** Every string a rule's conditions hold (operator values, list items, nested `$elemMatch`). */
const conditionStrings = (value: unknown): string[] =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(conditionStrings)
      : value && typeof value === "object"
        ? Object.values(value).flatMap(conditionStrings)
        : [];

/** A template expression other than an identity variable: the 400 message, or undefined. */
export const invalidPermissionTemplate = (rules: readonly PermissionRuleInput[]): string | undefined => {
  for (const rule of rules) {
    for (const text of conditionStrings(rule.conditions)) {
      const expression = invalidTemplateExpression(text);
      if (expression) {
        return `Invalid template ${expression} in permission conditions: only identity variables such as {{identity.id}}, {{identity.username}} or {{identity.metadata.<key>}} are allowed`;
      }
    }
  }
  return undefined;
};

/**
 * Rule sets the schema cannot refuse on its own, answered 400 by the services (after validation):
 * a template expression other than an identity variable, and `read` on secrets,
 * the legacy action, combined with its replacements. Returns the message or undefined.
 */
export const invalidPermissionCombination = (rules: readonly PermissionRuleInput[]): string | undefined => {
  const template = invalidPermissionTemplate(rules);
  if (template) return template;
  for (const rule of rules) {
    if (rule.subject !== "secrets" || !rule.action.includes("read")) continue;
    const readValue = rule.action.includes("readValue");
    const describe = rule.action.includes("describeSecret");
    if (!readValue && !describe) continue;
    const which =
      readValue && describe ? "both Read Value and Describe Secret" : readValue ? "Read Value" : "Describe Secret";
    return `You have selected Read, and ${which}. You cannot select Read Value or Describe Secret if you have selected Read. The Read permission is a legacy action which has been replaced by Describe Secret and Read Value.`;
  }
  return undefined;
};
