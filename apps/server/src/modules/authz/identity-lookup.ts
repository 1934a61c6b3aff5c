import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { ForbiddenError, NotFoundError } from "../../errors";
import { findIdentityInOrg, isInstanceAdminIdentity } from "./principals.repository";

/** An identity of the caller's organization, or undefined (another organization's, or not an id). */
export const findOrgIdentity = (ctx: RequestContext, identityId: string) =>
  isUuid(identityId) ? findIdentityInOrg(ctx.deps.db, ctx.actor.orgId, identityId) : Promise.resolve(undefined);

/** Look up an identity of the caller's organization; anything else is 404. */
export const requireIdentity = async (ctx: RequestContext, identityId: string) => {
  const identity = await findOrgIdentity(ctx, identityId);
  if (!identity) throw new NotFoundError(`Failed to find identity with ID ${identityId}`);
  return identity;
};

/** Whether the identity is the instance admin identity (the one that can create organizations). */
export const isInstanceAdmin = (ctx: RequestContext, identityId: string) =>
  isInstanceAdminIdentity(ctx.deps.db, identityId);

/**
 * The instance admin identity can create organizations; an org admin who could change it (its role,
 * its auth methods, its tokens) could take those powers. Only an instance admin may.
 */
export const assertMayModifyIdentity = async (ctx: RequestContext, identityId: string) => {
  if (!ctx.actor.isInstanceAdmin && (await isInstanceAdmin(ctx, identityId))) {
    throw new ForbiddenError(
      "You are attempting to modify an instance admin identity. This requires elevated instance admin privileges",
    );
  }
};
