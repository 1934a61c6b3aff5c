import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Every statement that can change what authenticating a machine token answers sends a notice on
 * `keyward_token_state` when it commits, whatever path made it (a service, a cascade, an
 * operator's SQL); every instance drops what it cached on it, so tokens are kept until something
 * changes them rather than for a second.
 * - A token's own row (revoked, renewed, its limits): one notice per row, naming the token by its
 *   hash (base64), so a renewal drops that token only.
 * - Its identity (name, organization, role, project), its auth method (trusted IPs), the instance
 *   admin, or tokens deleted: one empty notice per statement, which drops every cached token.
 * Writes of last-used times and spent uses name none of these columns and send nothing.
 */
const STATEMENT_TRIGGERS: [table: string, events: string][] = [
  ["identity_access_tokens", "delete"],
  ["identity_auth_configs", "update of id, access_token_trusted_ips or delete"],
  ["identities", "update of id, name, org_id, org_role, project_id or delete"],
  ["instance_config", "insert or update of admin_identity_id or delete"],
];
const TABLES = STATEMENT_TRIGGERS.map(([table]) => table);

export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create function keyward_token_state_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('keyward_token_state', '');
        return null;
      end $$`,
    `create function keyward_token_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('keyward_token_state', encode(old.token_hash, 'base64'));
        return null;
      end $$`,
    `create trigger identity_access_tokens_token_changed
      after update of id, identity_id, auth_config_id, token_hash, auth_method, is_revoked, last_renewed_at,
        created_at, access_token_ttl, access_token_num_uses_limit
      on identity_access_tokens for each row execute function keyward_token_changed()`,
    ...STATEMENT_TRIGGERS.map(
      ([table, events]) => `create trigger ${table}_token_state after ${events} on ${table}
        for each statement execute function keyward_token_state_changed()`,
    ),
    ...TABLES.map(
      (table) => `create trigger ${table}_token_state_truncate after truncate on ${table}
        for each statement execute function keyward_token_state_changed()`,
    ),
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `drop trigger identity_access_tokens_token_changed on identity_access_tokens`,
    ...TABLES.flatMap((table) => [
      `drop trigger ${table}_token_state on ${table}`,
      `drop trigger ${table}_token_state_truncate on ${table}`,
    ]),
    `drop function keyward_token_changed()`,
    `drop function keyward_token_state_changed()`,
  ]);
