import type { Actor } from "../../context";
import { ForbiddenError } from "../../errors";
import { orgRoleAbility, type Ability } from "../../permissions";

/** The actor's organization ability, from its built-in org role (abilities are shared per role). */
export const orgAbilityOf = (actor: Actor): Ability => orgRoleAbility(actor.orgRole);

/** Org-scoped checks against an explicitly named organization. */
export const getOrgPermission = (actor: Actor, orgId: string): Ability => {
  if (orgId !== actor.orgId) {
    throw new ForbiddenError(
      `Your token is scoped to organization with ID ${actor.orgId}, but this resource belongs to a different organization.`,
    );
  }
  return orgAbilityOf(actor);
};
