import type { Tx } from "../../db/transaction";
import { ForbiddenError } from "../../errors";
import { bumpPermissionVersion } from "../authz/permission-version";
import { syncPersonGroups } from "../groups/group-provisioning.service";
import {
  acceptInvitation,
  findAlias,
  findOrgMembershipOfUser,
  findUserByEmail,
  findUserById,
  insertAlias,
  insertOrgMembership,
  insertUser,
  insertUserProjectMembership,
  listUserProjectMemberships,
  lockInvitation,
  updateUserProfile,
} from "./user.repository";

/** Someone who signs in without an invitation may enter, and sees nothing until an admin grants a role. */
const UNINVITED_ORG_ROLE = "no-access";

/**
 * The person behind a provider login, in the organization whose provider vouched for them: found
 * by the provider's subject, else by the verified e-mail (linking the login), else created. Their
 * membership is the one they hold, a pending invitation to that e-mail (claimed now, with the
 * projects it names), or a new one without access.
 */
export const claimPersonOfProvider = async (
  trx: Tx,
  input: {
    orgId: string;
    aliasType: string;
    subject: string;
    email: string;
    firstName: string;
    lastName: string;
    now: Date;
    /** The provider's groups claim, when the organization lets it manage group memberships. */
    groups?: string[];
  },
): Promise<{ userId: string; note: Record<string, unknown> }> => {
  const person = await claimPerson(trx, input);
  if (input.groups) {
    const changed = await syncPersonGroups(trx, input.orgId, person.userId, input.groups);
    if (changed.added.length || changed.removed.length) person.note.groups = changed;
  }
  return person;
};

const claimPerson = async (
  trx: Tx,
  input: Parameters<typeof claimPersonOfProvider>[1],
): Promise<{ userId: string; note: Record<string, unknown> }> => {
  const note: Record<string, unknown> = {};
  const alias = await findAlias(trx, input.orgId, input.aliasType, input.subject);
  let userId = alias?.user_id;
  if (!userId) {
    const known = await findUserByEmail(trx, input.email);
    userId = known?.id ?? (await insertUser(trx, { ...input, isEmailVerified: true })).id;
    if (!known) note.created = true;
    await insertAlias(trx, { userId, orgId: input.orgId, aliasType: input.aliasType, externalId: input.subject });
  }
  const user = await findUserById(trx, userId);
  if (!user?.is_active) throw new ForbiddenError("Single sign-on failed: this person has been deactivated");
  if (input.firstName || input.lastName) await updateUserProfile(trx, userId, input);

  const membership = await findOrgMembershipOfUser(trx, input.orgId, userId);
  if (membership) {
    if (!membership.is_active) {
      throw new ForbiddenError("Single sign-on failed: your membership of this organization is deactivated");
    }
    return { userId, note };
  }
  const invitation = await lockInvitation(trx, input.orgId, input.email);
  if (invitation && invitation.invite_expires_at && new Date(invitation.invite_expires_at) > input.now) {
    await acceptInvitation(trx, invitation.id, userId);
    const projectIds = invitation.invited_project_ids;
    for (const projectId of projectIds) {
      const present = await listUserProjectMemberships(trx, projectId, [userId]);
      if (present.length === 0) {
        await insertUserProjectMembership(trx, projectId, userId, [
          { role: "member", customRoleId: null, isTemporary: false },
        ]);
      }
    }
    await bumpPermissionVersion(trx, projectIds);
    note.claimedInvitation = invitation.id;
    return { userId, note };
  }
  await insertOrgMembership(trx, input.orgId, userId, UNINVITED_ORG_ROLE);
  note.joinedWithoutInvitation = true;
  return { userId, note };
};
