import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { EventSecret } from "../../db/tables/events";

/** The PostgreSQL channel that tells every instance a project has new events (payload: the project id). */
export const EVENTS_CHANNEL = "keyward_secret_events";

export type EventRow = {
  seq: number;
  event_type: string;
  environment: string;
  secret_path: string;
  secrets: EventSecret[];
};

export type NewEvent = Omit<EventRow, "seq">;

/**
 * Numbers `count` new events of a project and returns the last number. The head row stays locked
 * until the transaction ends, so the events of concurrent changes are numbered in commit order.
 */
export const takeEventNumbers = async (trx: Tx, projectId: string, count: number) => {
  const row = await trx
    .insertInto("project_event_heads")
    .values({ project_id: projectId, last_seq: count })
    .onConflict((oc) => oc.column("project_id").doUpdateSet({ last_seq: sql`project_event_heads.last_seq + ${count}` }))
    .returning("last_seq")
    .executeTakeFirstOrThrow();
  return Number(row.last_seq);
};

export const insertEvents = (trx: Tx, projectId: string, firstSeq: number, events: readonly NewEvent[]) =>
  trx
    .insertInto("secret_events")
    .values(
      events.map((event, index) => ({
        project_id: projectId,
        seq: firstSeq + index,
        event_type: event.event_type,
        environment: event.environment,
        secret_path: event.secret_path,
        secrets: JSON.stringify(event.secrets),
      })),
    )
    .execute();

/** Delivered to listening instances when (and only if) the transaction commits. */
export const notifyEvents = (trx: Tx, projectId: string) =>
  sql`select pg_notify(${EVENTS_CHANNEL}, ${projectId})`.execute(trx);

/** The last event number of a project (0 before its first event). */
export const findEventHead = async (db: Database, projectId: string) => {
  const row = await db
    .selectFrom("project_event_heads")
    .select("last_seq")
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  return row ? Number(row.last_seq) : 0;
};

/** The oldest event number still kept for a project; undefined when none is kept. */
export const findOldestEvent = async (db: Database, projectId: string) => {
  const row = await db
    .selectFrom("secret_events")
    .select((eb) => eb.fn.min("seq").as("seq"))
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  return row?.seq == null ? undefined : Number(row.seq);
};

/** A project's events after `afterSeq`, oldest first, at most `limit`. */
export const listEventsAfter = async (db: Database, projectId: string, afterSeq: number, limit: number) => {
  const rows = await db
    .selectFrom("secret_events")
    .select(["seq", "event_type", "environment", "secret_path", "secrets"])
    .where("project_id", "=", projectId)
    .where("seq", ">", String(afterSeq))
    .orderBy("seq")
    .limit(limit)
    .execute();
  return rows.map((row): EventRow => ({ ...row, seq: Number(row.seq) }));
};

/** Events past the replay window go (a client asking for them is told to resync). */
export const deleteEventsBefore = async (db: Database, before: Date) => {
  const result = await db.deleteFrom("secret_events").where("created_at", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows);
};

/** The folders (environment, path) with events in (afterSeq, upToSeq], each with its last event number there. */
export const listChangedPlaces = async (db: Database, projectId: string, afterSeq: number, upToSeq: number) => {
  const rows = await db
    .selectFrom("secret_events")
    .select((eb) => ["environment", "secret_path", eb.fn.max("seq").as("last_seq")])
    .where("project_id", "=", projectId)
    .where("seq", ">", String(afterSeq))
    .where("seq", "<=", String(upToSeq))
    .groupBy(["environment", "secret_path"])
    .execute();
  return rows.map((row) => ({
    environment: row.environment,
    secretPath: row.secret_path,
    lastSeq: Number(row.last_seq),
  }));
};
