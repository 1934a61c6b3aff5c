import type { ColumnType } from "kysely";

/** The last event number given in a project. */
export interface ProjectEventHeadsTable {
  project_id: string;
  last_seq: ColumnType<string, string | number | bigint, string | number | bigint>;
}

/** One changed secret of an event: its name and tag slugs (what a subscriber's permission is judged on). */
export type EventSecret = { key: string; tags: string[] };

/** One event of a project's stream, kept for the replay window. */
export interface SecretEventsTable {
  project_id: string;
  seq: ColumnType<string, string | number | bigint, never>;
  event_type: string;
  environment: string;
  secret_path: string;
  secrets: ColumnType<EventSecret[], string, never>;
  created_at: ColumnType<Date | string, Date | string | undefined, never>;
}

export interface EventTables {
  project_event_heads: ProjectEventHeadsTable;
  secret_events: SecretEventsTable;
}
