/**
 * Identity templates in permission condition values: `{{identity.id}}`, `{{identity.username}}`,
 * `{{identity.metadata.<key>}}` and `{{identity.auth.<method>.claims.<claim>}}`,
 * filled in with the identity's own values when its ability is built. Any other expression is
 * refused when a rule is written.
 */
export const TEMPLATE_EXPRESSION = /\{\{\s*([^{}]*?)\s*\}\}/g;
const IDENTITY_PATH = /^identity(\.[A-Za-z0-9_-]+)+$/;

export const hasTemplate = (value: string) => value.includes("{{") && /\{\{[^{}]*\}\}/.test(value);

/** The value with each template replaced by `stand`: how a `$glob` is checked, since filled-in values are matched literally. */
export const withoutTemplates = (value: string, stand = "x") => value.replace(TEMPLATE_EXPRESSION, stand);

/** The first template expression in `value` that does not name an identity variable. */
export const invalidTemplateExpression = (value: string): string | undefined => {
  if (!value.includes("{{")) return undefined;
  for (const [whole, expression] of value.matchAll(TEMPLATE_EXPRESSION)) {
    if (!IDENTITY_PATH.test(expression ?? "")) return whole;
  }
  return undefined;
};
