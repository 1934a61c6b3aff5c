import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * The orphan sweep of a dynamic secret's target is claimed (`orphans_swept_at`): however many
 * instances run, one of them lists a target per sweep period, not each of them.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [`alter table dynamic_secrets add column orphans_swept_at timestamptz`]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [`alter table dynamic_secrets drop column orphans_swept_at`]);
