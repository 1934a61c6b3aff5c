import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Paced lease revocation and paged lease lists. A dynamic secret whose target refuses revocations is
 * paused as a whole (`revocation_paused_until`, growing with `revocation_failures`) so its due leases
 * wait without one failed call each. Leases are listed per secret in creation order: the partial
 * index (the rows a list shows) serves both the page and the count.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `alter table dynamic_secrets add column revocation_failures int not null default 0,
      add column revocation_paused_until timestamptz`,
    `create index dynamic_secret_leases_listed_idx on dynamic_secret_leases (dynamic_secret_id, created_at, id)
      where state <> 'creating'`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `drop index dynamic_secret_leases_listed_idx`,
    `alter table dynamic_secrets drop column revocation_failures, drop column revocation_paused_until`,
  ]);
