import type { Database } from "../../db/database";
import { PROJECT_COLUMNS } from "../authz/project-access.repository";

export const ENVIRONMENT_COLUMNS = [
  "id",
  "project_id",
  "name",
  "slug",
  "position",
  "created_at",
  "updated_at",
] as const;

export const insertProject = (
  db: Database,
  values: { org_id: string; name: string; slug: string; description: string | null; type: string },
) => db.insertInto("projects").values(values).returning(PROJECT_COLUMNS).executeTakeFirstOrThrow();

export const listEnvironments = (db: Database, projectIds: string[]) =>
  projectIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("environments")
        .select(ENVIRONMENT_COLUMNS)
        .where("project_id", "in", projectIds)
        .orderBy("position")
        .orderBy("created_at")
        .execute();

export type EnvironmentRow = Awaited<ReturnType<typeof listEnvironments>>[number];

export const findEnvironment = (db: Database, projectId: string, environmentId: string) =>
  db
    .selectFrom("environments")
    .select(ENVIRONMENT_COLUMNS)
    .where("project_id", "=", projectId)
    .where("id", "=", environmentId)
    .executeTakeFirst();

/** The projects an identity or a person is a member of, directly or through a group. */
export const listProjectsOfActor = (
  db: Database,
  orgId: string,
  actor: { type: "identity" | "user"; id: string },
  type?: string,
) => {
  const ids =
    actor.type === "user"
      ? db
          .selectFrom("user_project_memberships")
          .select("project_id")
          .where("user_id", "=", actor.id)
          .union(
            db
              .selectFrom("group_project_memberships as gpm")
              .innerJoin("group_user_members as gum", "gum.group_id", "gpm.group_id")
              .select("gpm.project_id")
              .where("gum.user_id", "=", actor.id),
          )
      : db
          .selectFrom("identity_project_memberships")
          .select("project_id")
          .where("identity_id", "=", actor.id)
          .union(
            db
              .selectFrom("group_project_memberships as gpm")
              .innerJoin("group_identity_members as gim", "gim.group_id", "gpm.group_id")
              .select("gpm.project_id")
              .where("gim.identity_id", "=", actor.id),
          );
  return db
    .selectFrom("projects as p")
    .select(PROJECT_COLUMNS.map((c) => `p.${c}` as const))
    .where("p.org_id", "=", orgId)
    .where("p.id", "in", ids)
    .$if(type !== undefined, (qb) => qb.where("p.type", "=", type!))
    .orderBy("p.created_at")
    .execute();
};
