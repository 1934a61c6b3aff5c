import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { StoredLoginMapping } from "../../db/tables/ssh";

const GROUP_COLUMNS = ["g.id", "g.project_id", "g.name", "g.login_mappings", "g.created_at", "g.updated_at"] as const;

export const findHostGroup = (db: Database, id: string) =>
  db
    .selectFrom("ssh_host_groups as g")
    .innerJoin("projects as p", "p.id", "g.project_id")
    .select([...GROUP_COLUMNS, "p.org_id"])
    .where("g.id", "=", id)
    .executeTakeFirst();

export type HostGroupRow = NonNullable<Awaited<ReturnType<typeof findHostGroup>>>;

/** A project's host groups by name, each with how many hosts it holds. */
export const listProjectHostGroups = (db: Database, projectId: string) =>
  db
    .selectFrom("ssh_host_groups as g")
    .select([
      ...GROUP_COLUMNS,
      (eb) =>
        eb
          .selectFrom("ssh_host_group_memberships as m")
          .select(sql<string>`count(*)`.as("n"))
          .whereRef("m.ssh_host_group_id", "=", "g.id")
          .as("host_count"),
    ])
    .where("g.project_id", "=", projectId)
    .orderBy("g.name")
    .execute();

export const insertHostGroup = (
  trx: Tx,
  row: { project_id: string; name: string; login_mappings: StoredLoginMapping[] },
) =>
  trx
    .insertInto("ssh_host_groups")
    .values({ ...row, login_mappings: JSON.stringify(row.login_mappings) })
    .returning(["id"])
    .executeTakeFirstOrThrow();

export const updateHostGroupRow = (
  trx: Tx,
  id: string,
  change: { name?: string; login_mappings?: StoredLoginMapping[] },
) =>
  trx
    .updateTable("ssh_host_groups")
    .set({
      ...(change.name === undefined ? {} : { name: change.name }),
      ...(change.login_mappings ? { login_mappings: JSON.stringify(change.login_mappings) } : {}),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .execute();

export const deleteHostGroupRow = (trx: Tx, id: string) =>
  trx.deleteFrom("ssh_host_groups").where("id", "=", id).execute();

/** Adds a host to a group; false when it was in it already. */
export const insertHostGroupMembership = async (trx: Tx, groupId: string, hostId: string) =>
  (
    await trx
      .insertInto("ssh_host_group_memberships")
      .values({ ssh_host_group_id: groupId, ssh_host_id: hostId })
      .onConflict((oc) => oc.doNothing())
      .returning("ssh_host_id")
      .execute()
  ).length > 0;

/** Removes a host from a group; false when it was not in it. */
export const deleteHostGroupMembership = async (trx: Tx, groupId: string, hostId: string) =>
  (
    await trx
      .deleteFrom("ssh_host_group_memberships")
      .where("ssh_host_group_id", "=", groupId)
      .where("ssh_host_id", "=", hostId)
      .returning("ssh_host_id")
      .execute()
  ).length > 0;

/**
 * The hosts of the group's project with whether each is in the group (and since when), by hostname:
 * `members` keeps only those in it, `others` only those not.
 */
export const listHostsForGroup = (
  db: Database,
  group: { id: string; project_id: string },
  which: "all" | "members" | "others",
  page: { offset: number; limit: number },
) => {
  let query = db
    .selectFrom("ssh_hosts as h")
    .leftJoin("ssh_host_group_memberships as m", (join) =>
      join.onRef("m.ssh_host_id", "=", "h.id").on("m.ssh_host_group_id", "=", group.id),
    )
    .where("h.project_id", "=", group.project_id);
  if (which === "members") query = query.where("m.ssh_host_id", "is not", null);
  if (which === "others") query = query.where("m.ssh_host_id", "is", null);
  return Promise.all([
    query
      .select(["h.id", "h.hostname", "h.alias", "m.created_at as joined_at"])
      .orderBy("h.hostname")
      .orderBy("h.id")
      .offset(page.offset)
      .limit(page.limit)
      .execute(),
    query.select(sql<string>`count(*)`.as("n")).executeTakeFirstOrThrow(),
  ]).then(([rows, count]) => ({ rows, totalCount: Number(count.n) }));
};

/** The login mappings the hosts get from their groups, by host id. */
export const groupMappingsOfHosts = async (db: Database, hostIds: readonly string[]) => {
  const byHost = new Map<string, StoredLoginMapping[]>();
  if (hostIds.length === 0) return byHost;
  const rows = await db
    .selectFrom("ssh_host_group_memberships as m")
    .innerJoin("ssh_host_groups as g", "g.id", "m.ssh_host_group_id")
    .select(["m.ssh_host_id", "g.login_mappings"])
    .where("m.ssh_host_id", "in", [...new Set(hostIds)])
    .orderBy("g.name")
    .execute();
  for (const row of rows) byHost.set(row.ssh_host_id, [...(byHost.get(row.ssh_host_id) ?? []), ...row.login_mappings]);
  return byHost;
};
