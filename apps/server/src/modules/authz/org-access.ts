import type { Actor } from "../../context";
import { ForbiddenError } from "../../errors";
import { ORG_ROLE_RULES, buildAbility, type Ability } from "../../permissions";

const orgAbilities = new Map<string, Ability>();

/** The actor's organization ability, from its built-in org role (abilities are shared per role). */
export const orgAbilityOf = (actor: Actor): Ability => {
  let ability = orgAbilities.get(actor.orgRole);
  if (!ability) {
    ability = buildAbility(ORG_ROLE_RULES[actor.orgRole] ?? []);
    orgAbilities.set(actor.orgRole, ability);
  }
  return ability;
};

/** Org-scoped checks against an explicitly named organization (reference §0.4). */
export const getOrgPermission = (actor: Actor, orgId: string): Ability => {
  if (orgId !== actor.orgId) {
    throw new ForbiddenError(
      `Your token is scoped to organization with ID ${actor.orgId}, but this resource belongs to a different organization.`,
    );
  }
  return orgAbilityOf(actor);
};
