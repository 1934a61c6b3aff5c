import { PermissionDeniedError } from "../../errors";
import type { Ability, PermissionObject } from "../../permissions";

/** 403 PermissionDenied "You are not allowed to <action> on <subject>" with the relevant rules. */
export const assertCan = (ability: Ability, action: string, subject: string, object?: PermissionObject) => {
  if (ability.can(action, subject, object)) return;
  const details = ability.rulesFor(action, subject).map((rule) => ({
    action: rule.action,
    inverted: rule.inverted,
    subject: rule.subject,
    ...(rule.conditions ? { conditions: rule.conditions } : {}),
  }));
  throw new PermissionDeniedError(action, subject, details);
};
