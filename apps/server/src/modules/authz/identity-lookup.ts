import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { ForbiddenError, NotFoundError } from "../../errors";
import { findIdentityInOrg, isInstanceAdminIdentity } from "./principals.repository";

/** Look up an identity of the caller's organization; anything else is 404. */
export const requireIdentity = async (ctx: RequestContext, identityId: string) => {
  const identity = isUuid(identityId) ? await findIdentityInOrg(ctx.deps.db, ctx.actor.orgId, identityId) : undefined;
  if (!identity) throw new NotFoundError(`Failed to find identity with ID ${identityId}`);
  return identity;
};

/**
 * The instance admin identity can create organizations; an org admin who could change it (its role,
 * its auth methods, its tokens) could take those powers. Only an instance admin may.
 */
export const assertMayModifyIdentity = async (ctx: RequestContext, identityId: string) => {
  if (!ctx.actor.isInstanceAdmin && (await isInstanceAdminIdentity(ctx.deps.db, identityId))) {
    throw new ForbiddenError(
      "You are attempting to modify an instance admin identity. This requires elevated instance admin privileges",
    );
  }
};
