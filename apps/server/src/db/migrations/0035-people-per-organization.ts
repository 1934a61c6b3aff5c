import type { Kysely } from "kysely";
import { ID, runStatements } from "./run-sql";

/**
 * What an organization says of a person stays in that organization: the names its provider or its
 * SCIM client sends live on the membership, not on the person. And a provider login that claims the
 * e-mail of a person known to another organization is linked only once the person proves, with a
 * code sent to that address, that the address is theirs: the pending link waits here, its code and
 * browser binding stored only as hashes.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `alter table org_user_memberships add column first_name text`,
    `alter table org_user_memberships add column last_name text`,
    `create table sso_email_links (${ID},
      org_id uuid not null references organizations(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      alias_type text not null, external_id text not null, email text not null,
      first_name text not null default '', last_name text not null default '', groups jsonb,
      binding_hash bytea not null unique, code_hash bytea not null, attempts int not null default 0,
      callback_port int, callback_state text,
      expires_at timestamptz not null, used_at timestamptz,
      created_at timestamptz not null default now())`,
    `create index sso_email_links_expires_at_idx on sso_email_links (expires_at)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table sso_email_links",
    "alter table org_user_memberships drop column first_name",
    "alter table org_user_memberships drop column last_name",
  ]);
