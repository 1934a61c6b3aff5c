import type { Tx } from "../../db/transaction";
import { sql, type SelectQueryBuilder } from "kysely";
import type { DB } from "../../db/schema";

/**
 * Bump the permission version of the projects `ids` selects, locking their rows in id order.
 *
 * Any change that feeds an ability in a project (a role's rules, a membership or its roles, an
 * additional privilege, a group's membership or project roles) calls this FIRST in its
 * transaction. The cached ability is then never reused after the change, and every such write to a
 * project queues on the project's row before touching anything else, so two of them cannot
 * deadlock over the rows they touch afterwards (a role being deleted while it is assigned, say).
 */
type Locked = SelectQueryBuilder<DB & { locked: DB["projects"] }, "locked", { id: string }>;

const bump = async (trx: Tx, which: (locked: Locked) => Locked) => {
  const locked = which(trx.selectFrom("projects as locked").select("locked.id")).orderBy("locked.id").forNoKeyUpdate();
  await trx
    .updateTable("projects")
    .set({ permission_version: sql`permission_version + 1` })
    .where("id", "in", locked)
    .execute();
};

export const bumpPermissionVersion = async (trx: Tx, projectIds: readonly string[]) => {
  if (projectIds.length === 0) return;
  await bump(trx, (locked) => locked.where("locked.id", "in", [...new Set(projectIds)]));
};

/** Group changes reach every project the group belongs to. */
export const bumpPermissionVersionForGroup = async (trx: Tx, groupId: string) => {
  await bump(trx, (locked) =>
    locked.where(
      "locked.id",
      "in",
      trx.selectFrom("group_project_memberships").select("project_id").where("group_id", "=", groupId),
    ),
  );
};

/**
 * An identity's name or metadata feeds the `{{identity.…}}` templates of every project it is in,
 * directly or through a group.
 */
export const bumpPermissionVersionForIdentity = async (trx: Tx, identityId: string) => {
  await bump(trx, (locked) =>
    locked.where((eb) =>
      eb.or([
        eb(
          "locked.id",
          "in",
          trx.selectFrom("identity_project_memberships").select("project_id").where("identity_id", "=", identityId),
        ),
        eb(
          "locked.id",
          "in",
          trx
            .selectFrom("group_project_memberships as gpm")
            .innerJoin("group_identity_members as gim", "gim.group_id", "gpm.group_id")
            .select("gpm.project_id")
            .where("gim.identity_id", "=", identityId),
        ),
      ]),
    ),
  );
};
