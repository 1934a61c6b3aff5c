import { matchConditions } from "./conditions";
import type { PermissionObject, PermissionRule } from "./types";

/**
 * An ability answers "may I <action> on <subject> (for this object)?" for a fixed rule set.
 * Rules are indexed by subject and action once; forbid rules beat allow rules.
 * Type-level checks (no object) ignore conditions on allow rules and skip conditional forbids;
 * object-level checks evaluate conditions.
 */
export type Ability = {
  readonly rules: readonly PermissionRule[];
  can: (action: string, subject: string, object?: PermissionObject) => boolean;
  /** The rules that mention this action and subject, for 403 details. */
  rulesFor: (action: string, subject: string) => PermissionRule[];
};

const key = (action: string, subject: string) => `${subject}\u0000${action}`;

export const buildAbility = (rules: readonly PermissionRule[]): Ability => {
  const index = new Map<string, PermissionRule[]>();
  for (const rule of rules) {
    for (const action of rule.action) {
      const k = key(action, rule.subject);
      const list = index.get(k);
      if (list) list.push(rule);
      else index.set(k, [rule]);
    }
  }
  return {
    rules,
    can(action, subject, object) {
      const candidates = index.get(key(action, subject));
      if (!candidates) return false;
      let allowed = false;
      for (const rule of candidates) {
        if (object === undefined) {
          if (rule.inverted) {
            if (!rule.conditions) return false;
          } else allowed = true;
        } else if (!rule.conditions || matchConditions(rule.conditions, object)) {
          if (rule.inverted) return false;
          allowed = true;
        }
      }
      return allowed;
    },
    rulesFor: (action, subject) => index.get(key(action, subject)) ?? [],
  };
};
