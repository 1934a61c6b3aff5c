import { PermissionBoundaryError } from "../../errors";
import type { Ability, PermissionRule } from "../../permissions";

type Missing = { action: string; subject: string; conditions?: unknown };

/**
 * Nobody grants what they do not hold. Conservative form: every granted (action, subject) must be
 * held unconditionally and unforbidden by the actor.
 */
export const missingPermissions = (actor: Ability, granted: readonly PermissionRule[]): Missing[] => {
  const missing: Missing[] = [];
  for (const rule of granted) {
    if (rule.inverted) continue;
    for (const action of rule.action) {
      const held = actor.rulesFor(action, rule.subject);
      const covered = held.some((r) => !r.inverted && !r.conditions) && !held.some((r) => r.inverted);
      if (!covered) missing.push({ action, subject: rule.subject, ...(rule.conditions ? { conditions: rule.conditions } : {}) });
    }
  }
  return missing;
};

export const assertWithinBoundary = (actor: Ability, granted: readonly PermissionRule[], message: string) => {
  const missing = missingPermissions(actor, granted);
  if (missing.length > 0) {
    throw new PermissionBoundaryError(`${message}. Actor privilege level is not high enough to perform this action`, missing);
  }
};
