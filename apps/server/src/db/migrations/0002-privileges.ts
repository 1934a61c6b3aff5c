import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Additional privileges of an identity in a project. They hang off the identity's project
 * membership, so removing the membership removes them; project and identity are kept beside it
 * for the slug lookups of the v1 and v2 routes and for loading an identity's rules.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table identity_project_additional_privileges (${ID},
      slug text not null,
      membership_id uuid not null references identity_project_memberships(id) on delete cascade,
      project_id uuid not null references projects(id) on delete cascade,
      identity_id uuid not null references identities(id) on delete cascade,
      is_temporary boolean not null default false,
      temporary_mode text, temporary_range text,
      temporary_access_start_time timestamptz, temporary_access_end_time timestamptz,
      permissions jsonb not null default '[]'::jsonb,
      ${TIMESTAMPS},
      constraint identity_project_additional_privileges_slug_key unique (membership_id, slug))`,
    `create index identity_project_additional_privileges_project_identity_idx
      on identity_project_additional_privileges (project_id, identity_id)`,
    `create index identity_project_additional_privileges_identity_id_idx on identity_project_additional_privileges (identity_id)`,
  ]);

export const down = (db: Kysely<unknown>) => runStatements(db, ["drop table identity_project_additional_privileges"]);
