import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Every statement that can change what authenticating a machine token answers — the token itself
 * (revoked, renewed, its limits), its identity (name, organization, role, project), its auth
 * method (trusted IPs) or the instance admin — sends a notice on `keyward_token_state` when it
 * commits, whatever path made it (a service, a cascade, an operator's SQL). Every instance clears
 * its cached tokens on it, so they are kept until something changes them rather than for a second.
 * Statement-level: one notice per statement (PostgreSQL folds equal notices of one transaction).
 * Writes of last-used times and spent uses name none of these columns and send nothing.
 */
const TRIGGERS: [table: string, events: string][] = [
  [
    "identity_access_tokens",
    "update of id, identity_id, auth_config_id, token_hash, auth_method, is_revoked, last_renewed_at, created_at, access_token_ttl, access_token_num_uses_limit or delete",
  ],
  ["identity_auth_configs", "update of id, access_token_trusted_ips or delete"],
  ["identities", "update of id, name, org_id, org_role, project_id or delete"],
  ["instance_config", "insert or update of admin_identity_id or delete"],
];

export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create function keyward_token_state_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('keyward_token_state', '');
        return null;
      end $$`,
    ...TRIGGERS.flatMap(([table, events]) => [
      `create trigger ${table}_token_state after ${events} on ${table}
        for each statement execute function keyward_token_state_changed()`,
      `create trigger ${table}_token_state_truncate after truncate on ${table}
        for each statement execute function keyward_token_state_changed()`,
    ]),
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    ...TRIGGERS.flatMap(([table]) => [
      `drop trigger ${table}_token_state on ${table}`,
      `drop trigger ${table}_token_state_truncate on ${table}`,
    ]),
    `drop function keyward_token_state_changed()`,
  ]);
