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
 *
 * The row is locked once, by the statement that updates it (one project), or by a locking read
 * of its own before the update (several, in id order). One statement that locks in a subquery and
 * updates in its outer query locks the row twice: its update works on the row as it was when the
 * statement began, before it queued for the lock, and has to lock the newest version again. With
 * key-share locks on the row (every insert that references the project takes one) PostgreSQL then
 * found two such bumps waiting on each other, one holding the row and one its tuple lock, and
 * aborted one with "deadlock detected".
 */
type Locked = SelectQueryBuilder<DB & { locked: DB["projects"] }, "locked", { id: string }>;

const increment = { permission_version: sql<string>`permission_version + 1` };

const bump = async (trx: Tx, which: (locked: Locked) => Locked) => {
  const rows = await which(trx.selectFrom("projects as locked").select("locked.id"))
    .orderBy("locked.id")
    .forNoKeyUpdate()
    .execute();
  if (rows.length === 0) return;
  await trx
    .updateTable("projects")
    .set(increment)
    .where(
      "id",
      "in",
      rows.map((row) => row.id),
    )
    .execute();
};

export const bumpPermissionVersion = async (trx: Tx, projectIds: readonly string[]) => {
  const ids = [...new Set(projectIds)];
  if (ids.length === 1) await trx.updateTable("projects").set(increment).where("id", "=", ids[0]!).execute();
  else if (ids.length > 1) await bump(trx, (locked) => locked.where("locked.id", "in", ids));
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
