import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * App connections: the credentials Keyward uses to act on an outside system (a database, a
 * directory), for an organization or one of its projects. The credentials are sealed, never
 * returned; their names are unique per organization (org-level) or per project.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table app_connections (${ID},
      org_id uuid not null references organizations(id) on delete cascade,
      project_id uuid references projects(id) on delete cascade,
      app text not null,
      name text not null,
      description text,
      method text not null,
      encrypted_credentials text not null,
      credentials_hash text not null,
      is_platform_managed_credentials boolean not null default false,
      gateway_id uuid,
      version int not null default 1,
      ${TIMESTAMPS})`,
    `create unique index app_connections_org_name_key on app_connections (org_id, name) where project_id is null`,
    `create unique index app_connections_project_name_key on app_connections (project_id, name) where project_id is not null`,
    `create index app_connections_org_id_idx on app_connections (org_id)`,
  ]);

export const down = (db: Kysely<unknown>) => runStatements(db, ["drop table app_connections"]);
