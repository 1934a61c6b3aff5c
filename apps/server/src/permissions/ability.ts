import { compileConditions, type ConditionsTest } from "./conditions";
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

/** The rules of one (subject, action), each with its conditions compiled (undefined: none). */
type Entry = { rules: PermissionRule[]; tests: (ConditionsTest | undefined)[] };

/**
 * Built once per (actor, project) and kept in the ability cache. The index is a map of maps keyed by
 * the subject and action strings as given: no key is built per rule or per check (joining them into
 * one string cost ~1 µs per rule and action at build, and an allocation per check), and each rule's
 * conditions are compiled once here, shared by every action of the rule, rather than on every check.
 */
export const buildAbility = (rules: readonly PermissionRule[]): Ability => {
  const index = new Map<string, Map<string, Entry>>();
  for (const rule of rules) {
    let bySubject = index.get(rule.subject);
    if (bySubject === undefined) index.set(rule.subject, (bySubject = new Map<string, Entry>()));
    const test = rule.conditions ? compileConditions(rule.conditions) : undefined;
    for (const action of rule.action) {
      const entry = bySubject.get(action);
      if (entry) {
        entry.rules.push(rule);
        entry.tests.push(test);
      } else bySubject.set(action, { rules: [rule], tests: [test] });
    }
  }
  const entryOf = (action: string, subject: string) => index.get(subject)?.get(action);
  return {
    rules,
    can(action, subject, object) {
      const entry = entryOf(action, subject);
      if (!entry) return false;
      const { rules: candidates, tests } = entry;
      let allowed = false;
      for (let i = 0; i < candidates.length; i++) {
        const rule = candidates[i]!;
        const test = tests[i];
        if (object === undefined) {
          if (rule.inverted) {
            if (!rule.conditions) return false;
          } else allowed = true;
        } else if (test === undefined || test(object)) {
          if (rule.inverted) return false;
          allowed = true;
        }
      }
      return allowed;
    },
    rulesFor: (action, subject) => entryOf(action, subject)?.rules ?? [],
  };
};
