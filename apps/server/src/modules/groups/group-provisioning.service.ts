import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { isUuid } from "../../db/errors";
import { bumpPermissionVersionForGroup } from "../authz/permission-version";
import {
  deleteGroupRow,
  deleteUserMembers,
  findGroupByName,
  findGroupInOrg,
  findUsersOfOrgMemberships,
  insertGroup,
  insertUserMembers,
  listGroupUserMembersOf,
  listGroups,
  pageGroups,
  updateGroupRow,
} from "./group.repository";
import { slugFromName } from "./group.service";

/**
 * What an identity provider's provisioning (SCIM) does to the organization's groups, inside the
 * caller's transaction. Members are named by their org membership id; a group's project roles
 * reach its members through the access query, so every change of its members bumps its projects.
 */
export type { GroupRow } from "./group.repository";

/** The org role of a group pushed by a provider: its project roles are what it grants. */
const PROVISIONED_GROUP_ROLE = "no-access";

export const pageGroupsForProvisioning = (
  db: Database,
  orgId: string,
  query: { name?: string; offset: number; limit: number },
) => pageGroups(db, orgId, query);

export const findGroupForProvisioning = (db: Database, orgId: string, groupId: string) =>
  isUuid(groupId) ? findGroupInOrg(db, orgId, groupId) : Promise.resolve(undefined);

export const findGroupNamed = (db: Database, orgId: string, name: string) => findGroupByName(db, orgId, name);

export const listProvisionedGroupMembers = (db: Database, orgId: string, groupIds: string[]) =>
  listGroupUserMembersOf(db, orgId, groupIds);

/** The users behind membership ids of the organization; ids that name nobody there are dropped. */
const usersOf = async (db: Database, orgId: string, membershipIds: string[]) =>
  (await findUsersOfOrgMemberships(db, orgId, membershipIds.filter(isUuid))).map((r) => r.user_id!);

export const createProvisionedGroup = (trx: Tx, orgId: string, name: string) =>
  insertGroup(trx, { org_id: orgId, name, slug: slugFromName(name), role: PROVISIONED_GROUP_ROLE });

export const renameProvisionedGroup = async (trx: Tx, groupId: string, name: string) => {
  await bumpPermissionVersionForGroup(trx, groupId);
  return updateGroupRow(trx, groupId, { name });
};

/** Change who is in the group: `set` replaces the members, `add` and `remove` change some. */
export const changeProvisionedGroupMembers = async (
  trx: Tx,
  orgId: string,
  groupId: string,
  change: { set?: string[]; add?: string[]; remove?: string[] | "all" },
) => {
  await bumpPermissionVersionForGroup(trx, groupId);
  if (change.set !== undefined) {
    await deleteUserMembers(trx, groupId, "all");
    await insertUserMembers(trx, groupId, await usersOf(trx, orgId, change.set));
  }
  if (change.remove === "all") await deleteUserMembers(trx, groupId, "all");
  else if (change.remove) await deleteUserMembers(trx, groupId, await usersOf(trx, orgId, change.remove));
  if (change.add) await insertUserMembers(trx, groupId, await usersOf(trx, orgId, change.add));
};

export const deleteProvisionedGroup = async (trx: Tx, groupId: string) => {
  await bumpPermissionVersionForGroup(trx, groupId);
  await deleteGroupRow(trx, groupId);
};

/**
 * A person's groups as their provider's groups claim names them (by group name or slug), when the
 * organization lets its provider manage group memberships: added to the groups it names, removed
 * from the others. Groups are never created here; names that match no group are ignored.
 */
export const syncPersonGroups = async (trx: Tx, orgId: string, userId: string, claimed: string[]) => {
  const wanted = new Set(claimed.map((name) => name.toLowerCase()));
  const groups = await listGroups(trx, orgId);
  const members = await listGroupUserMembersOf(
    trx,
    orgId,
    groups.map((g) => g.id),
  );
  const current = new Set(members.filter((m) => m.user_id === userId).map((m) => m.group_id));
  const changed: { added: string[]; removed: string[] } = { added: [], removed: [] };
  for (const group of groups) {
    const named = wanted.has(group.name.toLowerCase()) || wanted.has(group.slug.toLowerCase());
    if (named === current.has(group.id)) continue;
    await bumpPermissionVersionForGroup(trx, group.id);
    if (named) {
      await insertUserMembers(trx, group.id, [userId]);
      changed.added.push(group.slug);
    } else {
      await deleteUserMembers(trx, group.id, [userId]);
      changed.removed.push(group.slug);
    }
  }
  return changed;
};
