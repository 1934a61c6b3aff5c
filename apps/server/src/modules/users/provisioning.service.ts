import type { AppDeps } from "../../context";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { bumpPermissionVersion, bumpPermissionVersionForGroup } from "../authz/permission-version";
import { endSessionsOfUser } from "../sessions/session.service";
import { findProvisionedMember, pageProvisionedMembers, type MemberFilter } from "./provisioned-member.repository";
import {
  acceptInvitation,
  belongsElsewhere,
  deleteOrgMembershipRow,
  deleteUserGroupMembershipsInOrg,
  findOrgMembershipOfUser,
  insertOrgMembership,
  listUserGroupIdsInOrg,
  lockInvitation,
  updateMemberNames,
  updateOrgMembershipRow,
} from "./org-membership.repository";
import { deleteAliasesOfUser, findAlias, findUserByEmail, insertAlias, insertUser } from "./user.repository";
import {
  deleteUserProjectMembershipsInOrg,
  insertUserProjectMembership,
  listUserProjectIdsInOrg,
  listUserProjectMemberships,
} from "./project-membership.repository";

/**
 * What an identity provider's provisioning (SCIM) does to the organization's people, inside the
 * caller's transaction. A provisioned person is known by their org membership and by an alias of
 * `aliasType` holding the provider's userName.
 */
export type { MemberFilter, ProvisionedMemberRow } from "./provisioned-member.repository";

/** The org role of a person provisioned without one: a member who sees nothing until granted. */
export const PROVISIONED_ROLE = "no-access";

/** The project role an invitation gives in each project it names. */
export const INVITED_PROJECT_ROLE = "member";

export const pageMembersForProvisioning = (
  db: Database,
  orgId: string,
  aliasType: string,
  query: { filter?: MemberFilter; offset: number; limit: number },
) => pageProvisionedMembers(db, orgId, aliasType, query);

export const getMemberForProvisioning = (db: Database | Tx, orgId: string, aliasType: string, membershipId: string) =>
  findProvisionedMember(db, orgId, aliasType, membershipId);

export const isExternalIdTaken = async (db: Database | Tx, orgId: string, aliasType: string, externalId: string) =>
  (await findAlias(db, orgId, aliasType, externalId)) !== undefined;

/** Give the person the alias; false when someone else of the organization holds it already. */
const claimAlias = async (trx: Tx, input: { userId: string; orgId: string; aliasType: string; externalId: string }) => {
  await deleteAliasesOfUser(trx, input.orgId, input.userId, input.aliasType);
  await insertAlias(trx, input);
  return (await findAlias(trx, input.orgId, input.aliasType, input.externalId))?.user_id === input.userId;
};

/**
 * Claim the pending invitation of an e-mail to an organization, if there is one and it has not
 * expired: the membership becomes the person's, with the projects it names (as `member`, which the
 * inviter was checked to be able to give). Answers the membership id, or undefined.
 */
export const claimInvitation = async (trx: Tx, input: { orgId: string; email: string; userId: string; now: Date }) => {
  const invitation = await lockInvitation(trx, input.orgId, input.email);
  if (!invitation?.invite_expires_at || new Date(invitation.invite_expires_at) <= input.now) return undefined;
  await acceptInvitation(trx, invitation.id, input.userId);
  const projectIds = invitation.invited_project_ids;
  for (const projectId of projectIds) {
    const present = await listUserProjectMemberships(trx, projectId, [input.userId]);
    if (present.length === 0) {
      await insertUserProjectMembership(trx, projectId, input.userId, [
        { role: INVITED_PROJECT_ROLE, customRoleId: null, isTemporary: false },
      ]);
    }
  }
  await bumpPermissionVersion(trx, projectIds);
  return invitation.id;
};

/**
 * The person with this e-mail as an accepted member of the organization, found or created within
 * it: a new person is created; a person known only here (or to no organization) is linked; an
 * existing membership is kept, a pending invitation claimed, otherwise a `no-access` membership is
 * made. A person who belongs to another organization is not the provisioning client's to claim:
 * `foreign` (they join by signing in through the organization's single sign-on, proving the
 * address). Also answers whether the alias was free (when not, the caller rolls back).
 */
export const provisionMember = async (
  trx: Tx,
  input: {
    orgId: string;
    email: string;
    firstName: string;
    lastName: string;
    aliasType: string;
    externalId: string;
    now: Date;
  },
) => {
  const known = await findUserByEmail(trx, input.email);
  if (known && (await belongsElsewhere(trx, known.id, input.orgId))) {
    const existing = await findOrgMembershipOfUser(trx, input.orgId, known.id);
    if (!existing) return { foreign: true as const };
  }
  const userId = known?.id ?? (await insertUser(trx, { ...input, isEmailVerified: false })).id;
  const aliasClaimed = await claimAlias(trx, { userId, ...input });
  const existing = await findOrgMembershipOfUser(trx, input.orgId, userId);
  let membership: { membershipId: string; existed: boolean };
  if (existing) {
    membership = { membershipId: existing.id, existed: true };
  } else {
    const invitationId = await claimInvitation(trx, { orgId: input.orgId, email: input.email, userId, now: input.now });
    const membershipId = invitationId ?? (await insertOrgMembership(trx, input.orgId, userId, PROVISIONED_ROLE)).id;
    membership = { membershipId, existed: false };
  }
  await updateMemberNames(trx, input.orgId, userId, input);
  return { foreign: false as const, ...membership, userId, aliasClaimed };
};

/** The provider's userName and the person's names here; false when another member holds that userName. */
export const updateProvisionedProfile = async (
  trx: Tx,
  input: { orgId: string; userId: string; aliasType: string; externalId?: string; firstName: string; lastName: string },
) => {
  await updateMemberNames(trx, input.orgId, input.userId, input);
  if (input.externalId === undefined) return true;
  return claimAlias(trx, {
    userId: input.userId,
    orgId: input.orgId,
    aliasType: input.aliasType,
    externalId: input.externalId,
  });
};

/** Out of the organization's groups, every project it reached seeing the change first. */
const leaveOrgGroups = async (trx: Tx, orgId: string, userId: string) => {
  for (const groupId of await listUserGroupIdsInOrg(trx, orgId, userId)) {
    await bumpPermissionVersionForGroup(trx, groupId);
  }
  await deleteUserGroupMembershipsInOrg(trx, orgId, userId);
};

/**
 * Deactivate (`active:false`) or re-activate a member. Deactivating ends every session of the
 * person at once and takes them out of the organization's groups.
 */
export const setMemberActive = async (
  deps: AppDeps,
  trx: Tx,
  member: { orgId: string; membershipId: string; userId: string },
  active: boolean,
) => {
  await bumpPermissionVersion(trx, await listUserProjectIdsInOrg(trx, member.orgId, member.userId));
  if (!active) await leaveOrgGroups(trx, member.orgId, member.userId);
  await updateOrgMembershipRow(trx, member.membershipId, { isActive: active });
  if (!active) await endSessionsOfUser(deps, trx, member, "deprovisioned");
};

/** Remove a member: their project and group memberships, sessions and provisioning alias go too. */
export const removeMember = async (
  deps: AppDeps,
  trx: Tx,
  member: { orgId: string; membershipId: string; userId: string },
  aliasType: string,
) => {
  await bumpPermissionVersion(trx, await listUserProjectIdsInOrg(trx, member.orgId, member.userId));
  await leaveOrgGroups(trx, member.orgId, member.userId);
  await deleteUserProjectMembershipsInOrg(trx, member.orgId, member.userId);
  await endSessionsOfUser(deps, trx, member, "deprovisioned");
  await deleteAliasesOfUser(trx, member.orgId, member.userId, aliasType);
  await deleteOrgMembershipRow(trx, member.membershipId);
};
