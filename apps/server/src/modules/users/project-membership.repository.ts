import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { roleRows, type RoleGrant } from "../authz/membership-roles";
import { memberFirstName, memberLastName } from "./org-membership.repository";

/** People's project memberships and their roles. */

/** The person's project memberships in one organization's projects go with their org membership. */
export const deleteUserProjectMembershipsInOrg = (trx: Tx, orgId: string, userId: string) =>
  trx
    .deleteFrom("project_user_memberships")
    .where("user_id", "=", userId)
    .where("project_id", "in", trx.selectFrom("projects").select("id").where("org_id", "=", orgId))
    .returning("project_id")
    .execute();

export const insertUserProjectMembership = async (trx: Tx, projectId: string, userId: string, roles: RoleGrant[]) => {
  const row = await trx
    .insertInto("project_user_memberships")
    .values({ project_id: projectId, user_id: userId })
    .returning(["id", "user_id", "project_id", "created_at"])
    .executeTakeFirstOrThrow();
  await trx.insertInto("project_user_membership_roles").values(roleRows(row.id, roles)).execute();
  return row;
};

export const listUserProjectMemberships = (db: Database | Tx, projectId: string, userIds?: string[]) =>
  db
    .selectFrom("project_user_memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .innerJoin("projects as p", "p.id", "m.project_id")
    .leftJoin("org_user_memberships as om", (join) =>
      join.onRef("om.org_id", "=", "p.org_id").onRef("om.user_id", "=", "m.user_id"),
    )
    .select([
      "m.id",
      "m.user_id",
      "m.project_id",
      "m.created_at",
      "m.updated_at",
      "u.username",
      "u.email",
      memberFirstName,
      memberLastName,
    ])
    .where("m.project_id", "=", projectId)
    .$if(userIds !== undefined, (qb) => qb.where("m.user_id", "in", userIds!.length ? userIds! : [""]))
    .orderBy("m.created_at")
    .execute();

export const deleteUserProjectMemberships = (trx: Tx, projectId: string, userIds: string[]) =>
  trx
    .deleteFrom("project_user_memberships")
    .where("project_id", "=", projectId)
    .where("user_id", "in", userIds)
    .returning(["id", "user_id", "project_id", "created_at"])
    .execute();

/** Projects of an organization among `ids`: invitations may only name the inviter's own org's projects. */
export const findProjectsOfOrg = (db: Database, orgId: string, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("projects")
        .select(["id", "name"])
        .where("org_id", "=", orgId)
        .where(sql<boolean>`id = any(${ids}::uuid[])`)
        .execute();

/** The projects of an organization a person holds a membership of (their abilities there change with them). */
export const listUserProjectIdsInOrg = async (trx: Tx, orgId: string, userId: string) =>
  (
    await trx
      .selectFrom("project_user_memberships as m")
      .innerJoin("projects as p", "p.id", "m.project_id")
      .select("m.project_id")
      .where("m.user_id", "=", userId)
      .where("p.org_id", "=", orgId)
      .execute()
  ).map((r) => r.project_id);
