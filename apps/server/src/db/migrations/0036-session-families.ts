import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Session families. A sign-in's session is its family's root (`family_id` is its own id); a session
 * started from a member (the command line's) carries the root's id and the root's absolute expiry. A
 * spent refresh token of any member presented again revokes every session of the family, found by
 * the index. Sessions from before this migration are each a family of their own.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `alter table user_sessions add column family_id uuid references user_sessions(id) on delete cascade`,
    `update user_sessions set family_id = id`,
    `alter table user_sessions alter column family_id set not null`,
    `create index user_sessions_family_id_idx on user_sessions (family_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [`drop index user_sessions_family_id_idx`, `alter table user_sessions drop column family_id`]);
