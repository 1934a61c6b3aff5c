import { TEMPLATE_EXPRESSION, hasTemplate } from "@keyward/contract";
import type { ConditionValue, Conditions, PermissionRule } from "./types";

/** What `{{identity.…}}` templates in condition values are filled in from. */
export type TemplateContext = {
  identity: {
    id: string;
    username: string;
    metadata: Record<string, string>;
    /** Per auth method, what the token's login established, e.g. `{ oidc: { claims: { email } } }`. */
    auth: Record<string, unknown>;
  };
};

/** Whether any string inside a condition value (operators, list items, nested `$elemMatch`) holds a template. */
const holdsTemplate = (value: unknown): boolean => {
  if (typeof value === "string") return hasTemplate(value);
  if (Array.isArray(value)) return value.some(holdsTemplate);
  if (value !== null && typeof value === "object") {
    for (const key in value) if (holdsTemplate((value as Record<string, unknown>)[key])) return true;
  }
  return false;
};

export const conditionHasTemplate = (condition: ConditionValue): boolean => holdsTemplate(condition);

const ruleHasTemplate = (rule: PermissionRule) => rule.conditions !== undefined && holdsTemplate(rule.conditions);

export const rulesUseTemplates = (rules: readonly PermissionRule[]) => rules.some(ruleHasTemplate);

/** Whether the rules read `identity.auth`, which differs from one token of the identity to another. */
export const rulesUseAuthTemplates = (rules: readonly PermissionRule[]) =>
  rules.some((rule) => ruleHasTemplate(rule) && /\{\{\s*identity\.auth\./.test(JSON.stringify(rule.conditions)));

/** A variable's value; missing or non-scalar ones are empty, so they match nothing but empty values. */
const lookup = (context: TemplateContext, path: string): string => {
  let value: unknown = context;
  for (const part of path.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return "";
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : "";
};

/** Filled-in values are literals: in a `$glob`, their wildcard characters are escaped. */
const escapeGlob = (value: string) => value.replace(/[\\*?[\]{}()!+@,|^$]/g, "\\$&");

/** With `keepAuth`, `identity.auth.*` stays a template: it depends on a token, not on the identity. */
type FillOptions = { keepAuth?: boolean };

const fill = (text: string, context: TemplateContext, glob: boolean, options: FillOptions) =>
  text.replace(TEMPLATE_EXPRESSION, (match: string, path: string) => {
    if (options.keepAuth && path.startsWith("identity.auth.")) return match;
    return glob ? escapeGlob(lookup(context, path)) : lookup(context, path);
  });

const fillCondition = (condition: ConditionValue, context: TemplateContext, options: FillOptions): ConditionValue => {
  if (typeof condition === "string") return fill(condition, context, false, options);
  const filled: Exclude<ConditionValue, string> = {};
  if (condition.$eq !== undefined) filled.$eq = fill(condition.$eq, context, false, options);
  if (condition.$ne !== undefined) filled.$ne = fill(condition.$ne, context, false, options);
  if (condition.$in !== undefined) filled.$in = condition.$in.map((v) => fill(v, context, false, options));
  if (condition.$all !== undefined) filled.$all = condition.$all.map((v) => fill(v, context, false, options));
  if (condition.$glob !== undefined) filled.$glob = fill(condition.$glob, context, true, options);
  if (condition.$elemMatch !== undefined) filled.$elemMatch = fillConditions(condition.$elemMatch, context, options);
  return filled;
};

const fillConditions = (conditions: Conditions, context: TemplateContext, options: FillOptions): Conditions =>
  Object.fromEntries(
    Object.entries(conditions).map(([field, condition]) => [field, fillCondition(condition, context, options)]),
  );

/** The rules with every identity template filled in for one identity (rules without templates are reused as they are). */
export const renderRules = (
  rules: readonly PermissionRule[],
  context: TemplateContext,
  options: FillOptions = {},
): PermissionRule[] =>
  rules.map((rule) =>
    ruleHasTemplate(rule) ? { ...rule, conditions: fillConditions(rule.conditions!, context, options) } : rule,
  );
