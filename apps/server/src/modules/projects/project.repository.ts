import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { PROJECT_COLUMNS } from "../authz/project-access";

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
          .selectFrom("project_user_memberships")
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

export const deleteProjectRow = (trx: Tx, projectId: string) =>
  trx.deleteFrom("projects").where("id", "=", projectId).execute();

/** The project row, locked: one environment writer per project at a time. */
export const lockProjectRow = (trx: Tx, projectId: string) =>
  trx.selectFrom("projects").select("id").where("id", "=", projectId).forUpdate().executeTakeFirst();

export const countEnvironments = (db: Database, projectId: string) =>
  db
    .selectFrom("environments")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();

type NewEnvironment = { project_id: string; name: string; slug: string; position: number };

export const insertEnvironment = (trx: Tx, values: NewEnvironment) =>
  trx.insertInto("environments").values(values).returning(ENVIRONMENT_COLUMNS).executeTakeFirstOrThrow();

/** A new project's environment: only its id comes back. */
export const insertEnvironmentId = (trx: Tx, values: NewEnvironment) =>
  trx.insertInto("environments").values(values).returning("id").executeTakeFirstOrThrow();

export const updateEnvironmentRow = (
  trx: Tx,
  environmentId: string,
  values: { name?: string; slug?: string; position?: number; updated_at: Date },
) =>
  trx
    .updateTable("environments")
    .set(values)
    .where("id", "=", environmentId)
    .returning(ENVIRONMENT_COLUMNS)
    .executeTakeFirstOrThrow();

export const deleteEnvironmentRow = (trx: Tx, environmentId: string) =>
  trx.deleteFrom("environments").where("id", "=", environmentId).execute();

/** Environments at `position` or after move one down, making room for a new one there. */
export const shiftEnvironmentsFrom = (trx: Tx, projectId: string, position: number) =>
  trx
    .updateTable("environments")
    .set({ position: sql`position + 1` })
    .where("project_id", "=", projectId)
    .where("position", ">=", position)
    .execute();

/** Environments in positions lo..hi move by `step` (±1), making room for one that moves. */
export const shiftEnvironmentsBetween = (trx: Tx, projectId: string, lo: number, hi: number, step: number) =>
  trx
    .updateTable("environments")
    .set({ position: sql`position + ${step}` })
    .where("project_id", "=", projectId)
    .where("position", ">=", lo)
    .where("position", "<=", hi)
    .execute();

/** Environments after `position` move one up, closing the gap a deleted one left. */
export const closeEnvironmentGap = (trx: Tx, projectId: string, position: number) =>
  trx
    .updateTable("environments")
    .set({ position: sql`position - 1` })
    .where("project_id", "=", projectId)
    .where("position", ">", position)
    .execute();
