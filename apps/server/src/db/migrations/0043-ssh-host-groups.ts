import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * SSH host groups: login mappings shared by the hosts of a group (a host may be in several groups of its
 * project), each membership with the time it began.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table ssh_host_groups (${ID},
      project_id uuid not null references projects(id) on delete cascade,
      name text not null,
      login_mappings jsonb not null default '[]'::jsonb,
      ${TIMESTAMPS},
      constraint ssh_host_groups_name_key unique (project_id, name))`,
    `create table ssh_host_group_memberships (
      ssh_host_group_id uuid not null references ssh_host_groups(id) on delete cascade,
      ssh_host_id uuid not null references ssh_hosts(id) on delete cascade,
      created_at timestamptz not null default now(),
      primary key (ssh_host_group_id, ssh_host_id))`,
    `create index ssh_host_group_memberships_host_idx on ssh_host_group_memberships (ssh_host_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, ["drop table ssh_host_group_memberships", "drop table ssh_host_groups"]);
