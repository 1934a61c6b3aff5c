import type { ActorContext } from "../../context";
import { AppError, PermissionBoundaryError } from "../../errors";
import {
  ORG_ROLE_RULES,
  buildAbility,
  missingPermissions,
  orgRoleAbility,
  renderRules,
  type Ability,
  type MissingPermission,
  type PermissionRule,
  type TemplateContext,
} from "../../permissions";
import { toGrants } from "./grants";
import { getProjectPermission } from "./project-access";
import { listProjectIdsOfIdentity, loadProjectAccessById, loadTemplateContext } from "./project-access.repository";

/** The identity acted upon, as its module loaded it. */
export type TargetIdentity = { id: string; name: string; org_role: string };

export type IdentityChange = { name?: string; metadata?: { key: string; value: string }[] };

/**
 * Rules an identity holds or will hold in a project: permanent grants and temporary ones that have
 * not ended (a grant starting tomorrow is power the identity will have, so it counts today).
 */
const potentialRules = (grants: ReturnType<typeof toGrants>, now: number): PermissionRule[] =>
  grants.filter((grant) => grant.end === null || grant.end > now).flatMap((grant) => grant.rules);

/** The caller's ability in a project; none at all where it is not a member. */
const actorAbilityIn = async (ctx: ActorContext, projectId: string): Promise<Ability> => {
  try {
    return (await getProjectPermission(ctx, projectId)).ability;
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 403) return buildAbility([]);
    throw error;
  }
};

const templateContextAfter = (context: TemplateContext, change: IdentityChange): TemplateContext => ({
  identity: {
    ...context.identity,
    username: change.name ?? context.identity.username,
    metadata: change.metadata
      ? Object.fromEntries(change.metadata.map((m) => [m.key, m.value]))
      : context.identity.metadata,
  },
});

/**
 * What the actor lacks of the target identity's permissions: its org role and, in every project it
 * is in (directly or through a group), its roles, group roles and additional privileges. Identity
 * templates in the target's rules are filled in with the target's own values, after `change` when
 * the operation changes them; `identity.auth.*` stays a template (it varies by token) and is
 * covered only by an actor holding the rule without a condition on that field.
 */
export const missingOverIdentity = async (
  ctx: ActorContext,
  target: TargetIdentity,
  change: IdentityChange = {},
): Promise<MissingPermission[]> => {
  const { deps, actor } = ctx;
  const missing = missingPermissions(orgRoleAbility(actor.orgRole), ORG_ROLE_RULES[target.org_role] ?? []);
  const projectIds = await listProjectIdsOfIdentity(deps.db, target.id);
  if (projectIds.length === 0) return missing;
  let context = await loadTemplateContext(
    deps.db,
    { ...actor, type: "identity", id: target.id, name: target.name },
    false,
  );
  context = templateContextAfter(context, change);
  const now = deps.clock.now();
  for (const projectId of projectIds) {
    const row = await loadProjectAccessById(deps.db, projectId, { type: "identity", id: target.id });
    if (!row) continue;
    const rules = renderRules(potentialRules(toGrants(row.grants), now), context, { keepAuth: true });
    if (rules.length === 0) continue;
    missing.push(...missingPermissions(await actorAbilityIn(ctx, projectId), rules));
  }
  return missing;
};

/**
 * Nobody acts on an identity that holds more than they do: attaching, changing or removing its
 * auth methods, minting or revoking its tokens and client secrets, renaming it, editing its
 * metadata, changing its memberships or deleting it would otherwise let a limited caller log in
 * as (or take away) a more powerful identity. Instance admins are above every organization.
 */
export const assertActorCoversIdentity = async (
  ctx: ActorContext,
  target: TargetIdentity,
  message: string,
  change: IdentityChange = {},
) => {
  if (ctx.actor.isInstanceAdmin) return;
  // Acting on itself without changing what its templates read cannot widen anything.
  if (target.id === ctx.actor.id && change.name === undefined && change.metadata === undefined) return;
  const missing = await missingOverIdentity(ctx, target, change);
  if (missing.length > 0) {
    const seen = new Set<string>();
    const unique = missing.filter((entry) => {
      const key = JSON.stringify(entry);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    throw new PermissionBoundaryError(
      `${message}. Actor privilege level is not high enough to perform this action`,
      unique,
    );
  }
};
