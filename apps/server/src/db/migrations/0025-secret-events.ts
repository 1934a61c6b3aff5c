import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * The project events stream's log. Each project numbers its events 1, 2, 3 … in commit order
 * (`project_event_heads` holds the last number, taken with a row lock by the transaction that
 * records events, so numbers are never skipped nor seen out of order). Events are kept for the
 * replay window only; they hold secret names and tags, never values.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table project_event_heads (
      project_id uuid primary key references projects(id) on delete cascade,
      last_seq bigint not null default 0)`,
    `create table secret_events (
      project_id uuid not null references projects(id) on delete cascade,
      seq bigint not null,
      event_type text not null,
      environment text not null,
      secret_path text not null,
      secrets jsonb not null default '[]',
      created_at timestamptz not null default now(),
      primary key (project_id, seq))`,
    `create index secret_events_created_at_idx on secret_events (created_at)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, ["drop table secret_events", "drop table project_event_heads"]);
