import type { Tx } from "../../db/transaction";
import {
  incrementPermissionVersion,
  lockAndIncrementPermissionVersions,
  lockAndIncrementPermissionVersionsOfGroup,
  lockAndIncrementPermissionVersionsOfIdentity,
} from "./permission-version.repository";

/*
 * Bump the permission version of projects, locking their rows in id order.
 *
 * Any change that feeds an ability in a project (a role's rules, a membership or its roles, an
 * additional privilege, a group's membership or project roles) calls this FIRST in its
 * transaction. The cached ability is then never reused after the change, and every such write to a
 * project queues on the project's row before touching anything else, so two of them cannot
 * deadlock over the rows they touch afterwards (a role being deleted while it is assigned, say). How each bump locks is told in
 * `permission-version.repository.ts`.
 */

export const bumpPermissionVersion = async (trx: Tx, projectIds: readonly string[]) => {
  const ids = [...new Set(projectIds)];
  if (ids.length === 1) await incrementPermissionVersion(trx, ids[0]!);
  else if (ids.length > 1) await lockAndIncrementPermissionVersions(trx, ids);
};

/** Group changes reach every project the group belongs to. */
export const bumpPermissionVersionForGroup = (trx: Tx, groupId: string) =>
  lockAndIncrementPermissionVersionsOfGroup(trx, groupId);

/**
 * An identity's name or metadata feeds the `{{identity.…}}` templates of every project it is in,
 * directly or through a group.
 */
export const bumpPermissionVersionForIdentity = (trx: Tx, identityId: string) =>
  lockAndIncrementPermissionVersionsOfIdentity(trx, identityId);
