import { hash } from "node:crypto";
import {
  PROJECT_ROLE_RULES,
  buildAbility,
  type Ability,
  type PermissionRule,
  type TemplateContext,
} from "../../permissions";
import type { GrantJson, GrantsJson } from "./project-access.repository";

/** A role or privilege reduced to its rules and its window (epoch ms; null when permanent). */
export type Grant = { start: number | null; end: number | null; rules: readonly PermissionRule[] };

const time = (value: string | Date | null) => (value === null ? Number.NEGATIVE_INFINITY : new Date(value).getTime());

const toGrant = (json: GrantJson): Grant => {
  const custom = Array.isArray(json.permissions) ? (json.permissions as PermissionRule[]) : undefined;
  const rules = json.role === undefined || custom ? (custom ?? []) : (PROJECT_ROLE_RULES[json.role] ?? []);
  if (!json.isTemporary) return { start: null, end: null, rules };
  return { start: time(json.start), end: time(json.end), rules };
};

export const toGrants = (json: GrantsJson): Grant[] => [
  ...(json.roles ?? []).map(toGrant),
  ...(json.groupRoles ?? []).map(toGrant),
  ...(json.privileges ?? []).map(toGrant),
];

/** Temporary grants count only inside their window: start <= now < end. */
const isActive = (grant: Grant, now: number) => grant.start === null || (grant.start <= now && now < grant.end!);

export type BuiltAbility = { ability: Ability; rules: PermissionRule[]; validUntil: number };

/**
 * The ability of a set of grants at `now`, and the next instant a temporary grant starts or ends,
 * after which it must be rebuilt. Forbid rules beat allow rules wherever they come from.
 */
export const abilityOfGrants = (grants: readonly Grant[], now = Date.now()): BuiltAbility => {
  const rules: PermissionRule[] = [];
  let validUntil = Number.POSITIVE_INFINITY;
  for (const grant of grants) {
    if (grant.start !== null) {
      if (now < grant.start) validUntil = Math.min(validUntil, grant.start);
      else if (now < grant.end!) validUntil = Math.min(validUntil, grant.end!);
    }
    if (isActive(grant, now)) for (const rule of grant.rules) rules.push(rule);
  }
  return { ability: buildAbility(rules), rules, validUntil };
};

/**
 * The fingerprint of a holder's grants in a project, as loaded (roles by name or with their custom
 * rules, group roles, additional privileges, each with its window): holders with the same
 * fingerprint have the same ability. Rules with identity templates are filled in per holder, so
 * theirs is taken with the values filled in (`context`); a fingerprint without them is never one of
 * grants with templates (JSON text holds no NUL).
 */
export const abilityKeyOf = (json: GrantsJson, context?: TemplateContext) => {
  const grants = JSON.stringify([json.roles, json.groupRoles, json.privileges]);
  return hash("sha256", context === undefined ? grants : `${grants}\u0000${JSON.stringify(context)}`, "base64");
};
