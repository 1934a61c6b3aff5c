import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Keyset paging of the audit log: the event type and actor indexes end in (created_at desc, id desc)
 * like the organization and project ones, so a page after a cursor is a range scan with no sort. The
 * expiry index goes: pruning walks a chain by sequence number, nothing reads by expiry, and every
 * index costs each append.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create index audit_logs_org_type_keyset_idx on audit_logs (org_id, event_type, created_at desc, id desc)`,
    `drop index audit_logs_org_type_created_idx`,
    `create index audit_logs_org_actor_keyset_idx on audit_logs (org_id, actor_id, created_at desc, id desc)`,
    `drop index audit_logs_org_actor_created_idx`,
    `drop index audit_logs_expires_idx`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create index audit_logs_expires_idx on audit_logs (expires_at)`,
    `create index audit_logs_org_actor_created_idx on audit_logs (org_id, actor_id, created_at desc)`,
    `drop index audit_logs_org_actor_keyset_idx`,
    `create index audit_logs_org_type_created_idx on audit_logs (org_id, event_type, created_at desc)`,
    `drop index audit_logs_org_type_keyset_idx`,
  ]);
