import type { AppDeps } from "../../context";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { bumpPermissionVersion, bumpPermissionVersionForGroup } from "../authz/permission-version";
import { endSessionsOfUser } from "../sessions/session.service";
import {
  acceptInvitation,
  deleteAliasesOfUser,
  deleteOrgMembershipRow,
  deleteUserGroupMembershipsInOrg,
  deleteUserProjectMembershipsInOrg,
  findAlias,
  findOrgMembershipOfUser,
  findProvisionedMember,
  findUserByEmail,
  insertAlias,
  insertOrgMembership,
  insertUser,
  listUserGroupIdsInOrg,
  listUserProjectIdsInOrg,
  lockInvitation,
  pageProvisionedMembers,
  updateOrgMembershipRow,
  updateUserNames,
  type MemberFilter,
} from "./user.repository";

/**
 * What an identity provider's provisioning (SCIM) does to the organization's people, inside the
 * caller's transaction. A provisioned person is known by their org membership and by an alias of
 * `aliasType` holding the provider's userName.
 */
export type { MemberFilter, ProvisionedMemberRow } from "./user.repository";

/** The org role of a person provisioned without one: a member who sees nothing until granted. */
export const PROVISIONED_ROLE = "no-access";

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
 * The person with this e-mail (created if new) as an accepted member of the organization: an
 * existing membership is kept, a pending invitation is claimed, otherwise a `no-access` membership.
 * Returns the membership id, whether it was already there, and whether the alias was free (when
 * not, the caller rolls the transaction back).
 */
export const provisionMember = async (
  trx: Tx,
  input: { orgId: string; email: string; firstName: string; lastName: string; aliasType: string; externalId: string },
) => {
  const known = await findUserByEmail(trx, input.email);
  const userId = known?.id ?? (await insertUser(trx, { ...input, isEmailVerified: false })).id;
  if (known) await updateUserNames(trx, userId, input);
  const aliasClaimed = await claimAlias(trx, { userId, ...input });
  const existing = await findOrgMembershipOfUser(trx, input.orgId, userId);
  if (existing) return { membershipId: existing.id, userId, existed: true, aliasClaimed };
  const invitation = await lockInvitation(trx, input.orgId, input.email);
  if (invitation) {
    await acceptInvitation(trx, invitation.id, userId);
    return { membershipId: invitation.id, userId, existed: false, aliasClaimed };
  }
  const inserted = await insertOrgMembership(trx, input.orgId, userId, PROVISIONED_ROLE);
  return { membershipId: inserted.id, userId, existed: false, aliasClaimed };
};

/** The provider's userName and the person's names; false when another member holds that userName. */
export const updateProvisionedProfile = async (
  trx: Tx,
  input: { orgId: string; userId: string; aliasType: string; externalId?: string; firstName: string; lastName: string },
) => {
  await updateUserNames(trx, input.userId, input);
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
  if (!active) await endSessionsOfUser(deps, trx, member.userId, "deprovisioned");
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
  await endSessionsOfUser(deps, trx, member.userId, "deprovisioned");
  await deleteAliasesOfUser(trx, member.orgId, member.userId, aliasType);
  await deleteOrgMembershipRow(trx, member.membershipId);
};
