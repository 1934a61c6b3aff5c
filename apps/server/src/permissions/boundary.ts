import type { Ability } from "./ability";
import { conditionsCover, conditionsMayOverlap } from "./condition-subset";
import type { Conditions, PermissionRule } from "./types";

export type MissingPermission = { action: string; subject: string; conditions?: Conditions };

const key = (action: string, subject: string) => `${subject}\u0000${action}`;

/** The granted forbid rules per action and subject. */
const forbidsOf = (granted: readonly PermissionRule[]) => {
  const index = new Map<string, PermissionRule[]>();
  for (const rule of granted) {
    if (!rule.inverted) continue;
    for (const action of rule.action) {
      const k = key(action, rule.subject);
      index.set(k, [...(index.get(k) ?? []), rule]);
    }
  }
  return index;
};

/**
 * Nobody grants what they do not hold. For every allow rule granted and each of
 * its actions, the holder must have an allow rule whose conditions the granted rule implies, and
 * no forbid rule the granted rule could overlap, unless the grant itself forbids all of that forbid
 * rule's ground. Granted forbid rules only narrow, so they pass. `read` on secret-folders is exempt:
 * every project member may list folders.
 */
export const missingPermissions = (holder: Ability, granted: readonly PermissionRule[]): MissingPermission[] => {
  const missing: MissingPermission[] = [];
  const seen = new Set<string>();
  const grantedForbids = forbidsOf(granted);
  const note = (entry: MissingPermission) => {
    const k = JSON.stringify(entry);
    if (seen.has(k)) return;
    seen.add(k);
    missing.push(entry);
  };
  for (const rule of granted) {
    if (rule.inverted) continue;
    for (const action of rule.action) {
      if (action === "read" && rule.subject === "secret-folders") continue;
      const held = holder.rulesFor(action, rule.subject);
      const allows = held.filter((r) => !r.inverted);
      if (allows.length === 0) {
        note({ action, subject: rule.subject });
        continue;
      }
      const ownForbids = grantedForbids.get(key(action, rule.subject)) ?? [];
      const blocked = (forbid: PermissionRule) =>
        conditionsMayOverlap(rule.conditions, forbid.conditions) &&
        !ownForbids.some((f) => conditionsCover(forbid.conditions, f.conditions));
      const covered =
        allows.some((r) => conditionsCover(rule.conditions, r.conditions)) &&
        !held.some((r) => r.inverted && blocked(r));
      if (!covered)
        note({ action, subject: rule.subject, ...(rule.conditions ? { conditions: rule.conditions } : {}) });
    }
  }
  return missing;
};
