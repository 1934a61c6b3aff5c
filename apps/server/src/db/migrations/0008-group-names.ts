import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/** A group's name is unique in its organization, as its slug already is: enforced, not only checked. */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, ["create unique index groups_org_id_name_key on groups (org_id, name)"]);

export const down = (db: Kysely<unknown>) => runStatements(db, ["drop index groups_org_id_name_key"]);
