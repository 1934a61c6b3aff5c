import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { ForbiddenError } from "../../errors";
import { syncPersonGroups } from "../groups/group-provisioning.service";
import { claimInvitation } from "./provisioning.service";
import {
  belongsElsewhere,
  findOrgMembershipOfUser,
  insertOrgMembership,
  updateMemberNames,
} from "./org-membership.repository";
import {
  findAlias,
  findUserByEmail,
  findUserById,
  insertAlias,
  insertUser,
  markEmailVerified,
} from "./user.repository";
import { findOrganizationById, findOrganizationBySlug } from "./organization.repository";

/** The organization a sign-in names by its slug (lower-case), for the sign-in routes. */
export const organizationToSignInTo = (db: Database, slug: string) => findOrganizationBySlug(db, slug.toLowerCase());

/** The organization of a sign-in under way, inside its transaction (for the e-mail that names it). */
export const organizationOfSignIn = (trx: Tx, orgId: string) => findOrganizationById(trx, orgId);

/** Someone who signs in without an invitation may enter, and sees nothing until an admin grants a role. */
const UNINVITED_ORG_ROLE = "no-access";

export type ProviderLogin = {
  orgId: string;
  aliasType: string;
  subject: string;
  email: string;
  firstName: string;
  lastName: string;
  now: Date;
  /** The provider's groups claim, when the organization lets it manage group memberships. */
  groups?: string[];
};

export type ClaimedPerson = { userId: string; note: Record<string, unknown> };

/**
 * Who a provider login is, as far as the organization whose provider vouched for it may decide:
 * - the person its login (alias) was linked to before;
 * - else a new person, when nobody has the e-mail yet;
 * - else the person with that e-mail, when they belong to no other organization: the organization
 *   that holds them is the one vouching;
 * - else nobody yet: the person is known to another organization, and an organization's provider
 *   saying an address is verified proves nothing to the others. The caller asks the person to prove
 *   the address (`proofNeeded`), then links with `linkProvenPerson`.
 */
export const identifyProviderLogin = async (
  trx: Tx,
  login: ProviderLogin,
): Promise<{ linked: ClaimedPerson } | { proofNeeded: { userId: string } }> => {
  const alias = await findAlias(trx, login.orgId, login.aliasType, login.subject);
  if (alias) return { linked: await enterOrganization(trx, login, alias.user_id, {}) };
  const known = await findUserByEmail(trx, login.email);
  if (!known) {
    const created = await insertUser(trx, { ...login, isEmailVerified: true });
    return { linked: await linkProvenPerson(trx, login, created.id, { created: true }) };
  }
  if (await belongsElsewhere(trx, known.id, login.orgId)) return { proofNeeded: { userId: known.id } };
  return { linked: await linkProvenPerson(trx, login, known.id, { linkedByEmail: true }) };
};

/** Link the login to a person whose address is proven (a new person, or one who entered the code). */
export const linkProvenPerson = async (
  trx: Tx,
  login: ProviderLogin,
  userId: string,
  note: Record<string, unknown>,
): Promise<ClaimedPerson> => {
  await insertAlias(trx, { userId, orgId: login.orgId, aliasType: login.aliasType, externalId: login.subject });
  if ((await findAlias(trx, login.orgId, login.aliasType, login.subject))?.user_id !== userId) {
    throw new ForbiddenError("Single sign-on failed: this provider login is linked to another person");
  }
  await markEmailVerified(trx, userId);
  return enterOrganization(trx, login, userId, note);
};

/**
 * The person enters the organization: the membership they hold, a pending invitation to the e-mail
 * (claimed now, with the projects it names), or a new one without access. The provider's names are
 * the organization's names for them; its groups claim sets their groups there.
 */
const enterOrganization = async (
  trx: Tx,
  login: ProviderLogin,
  userId: string,
  note: Record<string, unknown>,
): Promise<ClaimedPerson> => {
  const user = await findUserById(trx, userId);
  if (!user?.is_active) throw new ForbiddenError("Single sign-on failed: this person has been deactivated");
  const membership = await findOrgMembershipOfUser(trx, login.orgId, userId);
  if (membership && !membership.is_active) {
    throw new ForbiddenError("Single sign-on failed: your membership of this organization is deactivated");
  }
  if (!membership) {
    const invitationId = await claimInvitation(trx, { orgId: login.orgId, email: login.email, userId, now: login.now });
    if (invitationId) {
      note.claimedInvitation = invitationId;
    } else {
      await insertOrgMembership(trx, login.orgId, userId, UNINVITED_ORG_ROLE);
      note.joinedWithoutInvitation = true;
    }
  }
  if (login.firstName || login.lastName) await updateMemberNames(trx, login.orgId, userId, login);
  if (login.groups) {
    const changed = await syncPersonGroups(trx, login.orgId, userId, login.groups);
    if (changed.added.length || changed.removed.length) note.groups = changed;
  }
  return { userId, note };
};
