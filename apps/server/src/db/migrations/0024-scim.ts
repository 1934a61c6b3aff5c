import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/** SCIM provisioning: an organization's SCIM bearer tokens, stored only as hashes. */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table scim_tokens (${ID},
      org_id uuid not null references organizations(id) on delete cascade,
      token_hash bytea not null unique, description text not null default '',
      ttl_days int not null default 0, expires_at timestamptz,
      ${TIMESTAMPS})`,
    `create index scim_tokens_org_id_idx on scim_tokens (org_id)`,
  ]);

export const down = (db: Kysely<unknown>) => runStatements(db, ["drop table scim_tokens"]);
