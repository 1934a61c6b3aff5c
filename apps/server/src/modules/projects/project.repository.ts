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

export const listProjectsOfIdentity = (db: Database, orgId: string, identityId: string, type?: string) =>
  db
    .selectFrom("projects as p")
    .innerJoin("identity_project_memberships as m", "m.project_id", "p.id")
    .select(PROJECT_COLUMNS.map((c) => `p.${c}` as const))
    .where("p.org_id", "=", orgId)
    .where("m.identity_id", "=", identityId)
    .$if(type !== undefined, (qb) => qb.where("p.type", "=", type!))
    .orderBy("p.created_at")
    .execute();
