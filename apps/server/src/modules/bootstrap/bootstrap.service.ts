import { inTransaction, type Tx } from "../../db/transaction";
import type { Database } from "../../db/database";
import { noteAudit, type PublicContext, type RequestContext } from "../../context";
import { randomBytes } from "node:crypto";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError, ForbiddenError } from "../../errors";
import { issueAccessToken } from "../access-tokens/access-token.service";
import { attachUnlimitedTokenAuth } from "../auth-methods/shared/auth-config";
import { addIdentityInTransaction } from "../identities/identity.service";
import {
  insertAdminUser,
  insertInstanceConfig,
  insertOrganization,
  isInstanceInitialized,
  lockInstanceConfig,
} from "./bootstrap.repository";

/** Whether the instance has been set up (GET /api/v1/admin/config). */
export const isInstanceSetUp = (db: Database) => isInstanceInitialized(db);

const orgSlug = (name: string) =>
  `${
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || "org"
  }-${randomBytes(3).toString("hex")}`;

/**
 * An organization with an admin identity holding Token Auth (trusted everywhere, no expiry) and
 * one token, returned once.
 */
export const createOrganizationWithAdmin = async (trx: Tx, name: string, identityName: string) => {
  const organization = await insertOrganization(trx, name, orgSlug(name));
  // The event belongs to the organization it creates, not to the instance admin's.
  noteAudit(trx, { orgId: organization.id, metadata: { orgId: organization.id, name, slug: organization.slug } });
  const identity = await addIdentityInTransaction(trx, {
    org_id: organization.id,
    project_id: null,
    name: identityName,
    org_role: "admin",
    has_delete_protection: false,
  });
  const config = await attachUnlimitedTokenAuth(trx, identity.id);
  const issued = await issueAccessToken(trx, config, { name: `${identityName} Token` });
  return {
    organization,
    identity: { id: identity.id, name: identityName, credentials: { token: issued.accessToken } },
  };
};

/** What the bootstrap answer says of the token it returns. */
export const BOOTSTRAP_TOKEN_WARNING =
  "This token never expires and holds every right of the instance admin: keep it like a master key. " +
  "To replace it, give an admin identity Universal Auth and a client secret, sign in with that identity, " +
  "then revoke this token (POST /api/v1/auth/token/revoke with {accessToken}).";

/**
 * What a second set-up answers (400): the first one's admin token is the way in, and it is shown only once.
 */
export const ALREADY_SET_UP =
  "Instance has already been set up: use the admin token its set-up answered (shown once), " +
  "or sign in to the console with single sign-on";

/** First-run setup; the instance_config row makes a second call fail. */
export const bootstrapInstance = async (
  ctx: PublicContext,
  body: { email: string; password?: string; organization: string },
) => {
  try {
    return await inTransaction(ctx, async (trx) => {
      if (await lockInstanceConfig(trx)) throw new BadRequestError(ALREADY_SET_UP);
      const { organization, identity } = await createOrganizationWithAdmin(
        trx,
        body.organization,
        "Instance Admin Identity",
      );
      const user = await insertAdminUser(trx, body.email.toLowerCase(), organization.id);
      await insertInstanceConfig(trx, user.id, identity.id);
      return {
        message: "Successfully bootstrapped instance",
        user: {
          id: user.id,
          username: user.username,
          email: user.email,
          firstName: user.first_name,
          lastName: user.last_name,
          superAdmin: user.super_admin,
        },
        organization,
        identity,
        warning: BOOTSTRAP_TOKEN_WARNING,
      };
    });
  } catch (error) {
    // Two concurrent first calls: the loser hits the primary key of instance_config.
    if (isUniqueViolation(error)) throw new BadRequestError(ALREADY_SET_UP);
    throw error;
  }
};

export const createOrganization = async (ctx: RequestContext, body: { name: string }) => {
  if (!ctx.actor.isInstanceAdmin) throw new ForbiddenError("Only instance admins can create organizations");
  return inTransaction(ctx, (trx) => createOrganizationWithAdmin(trx, body.name, `${body.name} Admin Identity`));
};
