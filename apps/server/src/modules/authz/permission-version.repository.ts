import type { Tx } from "../../db/transaction";
import { sql, type SelectQueryBuilder } from "kysely";
import type { DB } from "../../db/schema";

/**
 * The SQL of permission-version bumps (`permission-version.ts` says when a change calls them).
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

/** One project: the update locks its row. */
export const incrementPermissionVersion = (trx: Tx, projectId: string) =>
  trx.updateTable("projects").set(increment).where("id", "=", projectId).execute();

/** Several projects: locked in id order by a read of their own, then updated. */
export const lockAndIncrementPermissionVersions = (trx: Tx, projectIds: readonly string[]) =>
  bump(trx, (locked) => locked.where("locked.id", "in", projectIds));

/** Group changes reach every project the group belongs to. */
export const lockAndIncrementPermissionVersionsOfGroup = async (trx: Tx, groupId: string) => {
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
export const lockAndIncrementPermissionVersionsOfIdentity = async (trx: Tx, identityId: string) => {
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
