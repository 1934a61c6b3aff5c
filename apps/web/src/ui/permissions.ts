import picomatch from "picomatch/posix";
import { compileConditions, unpackRules, type PermissionObject } from "@keyward/contract";

/** Path-style globs as the server compiles them (`strictSlashes: false`). */
const compileGlob = (pattern: string) => picomatch(pattern, { strictSlashes: false });

export type Permissions = { can: (action: string, subject: string, object: PermissionObject) => boolean };

/**
 * The caller's rules in a project (the permissions route's packed answer) as one object-level check,
 * decided as the server decides it: a matching forbid rule beats every allow rule. The console uses it
 * only to say what a screen's caller may not do; the server still decides every call.
 */
export const permissionsOf = (packed: readonly (readonly unknown[])[]): Permissions => {
  const rules = unpackRules(packed).map((rule) => ({
    ...rule,
    test: rule.conditions ? compileConditions(rule.conditions, compileGlob) : () => true,
  }));
  return {
    can: (action, subject, object) => {
      let allowed = false;
      for (const rule of rules) {
        if (rule.subject !== subject || !rule.action.includes(action) || !rule.test(object)) continue;
        if (rule.inverted) return false;
        allowed = true;
      }
      return allowed;
    },
  };
};
