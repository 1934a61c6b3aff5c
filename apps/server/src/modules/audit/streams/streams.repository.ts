import { sql } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";

const STREAM_COLUMNS = [
  "s.id",
  "s.org_id",
  "s.provider",
  "s.url",
  "s.header_names",
  "s.last_error",
  "s.created_at",
  "s.updated_at",
] as const;

const streamsWithPending = (db: Database) =>
  db
    .selectFrom("audit_log_streams as s")
    .select(STREAM_COLUMNS)
    .select((eb) =>
      eb
        .selectFrom("audit_log_outbox as o")
        .whereRef("o.stream_id", "=", "s.id")
        .select(eb.fn.countAll<string>().as("n"))
        .as("pending"),
    );

export const listStreams = (db: Database, orgId: string) =>
  streamsWithPending(db).where("s.org_id", "=", orgId).orderBy("s.created_at").execute();

export const findStream = (db: Database, orgId: string, id: string) =>
  streamsWithPending(db).where("s.org_id", "=", orgId).where("s.id", "=", id).executeTakeFirst();

export type StreamRow = NonNullable<Awaited<ReturnType<typeof findStream>>>;

export const insertStream = (
  trx: Tx,
  values: {
    org_id: string;
    provider: string;
    url: string;
    header_names: string[];
    encrypted_headers: string;
    encrypted_signing_secret: string;
  },
) =>
  trx
    .insertInto("audit_log_streams")
    .values({ ...values, header_names: JSON.stringify(values.header_names) })
    .returning("id")
    .executeTakeFirstOrThrow();

export const updateStream = (
  trx: Tx,
  id: string,
  values: { url: string; header_names: string[]; encrypted_headers: string },
) =>
  trx
    .updateTable("audit_log_streams")
    .set({ ...values, header_names: JSON.stringify(values.header_names), updated_at: new Date() })
    .where("id", "=", id)
    .execute();

/** A new stream's sealed headers and signing secret, once its id is known to bind them. */
export const setStreamSealedSecrets = (
  trx: Tx,
  id: string,
  sealed: { encrypted_headers: string; encrypted_signing_secret: string },
) => trx.updateTable("audit_log_streams").set(sealed).where("id", "=", id).execute();

export const deleteStream = (trx: Tx, id: string) => trx.deleteFrom("audit_log_streams").where("id", "=", id).execute();

export const findStreamSecrets = (db: Database, id: string) =>
  db
    .selectFrom("audit_log_streams")
    .select(["id", "url", "encrypted_headers", "encrypted_signing_secret", "attempts"])
    .where("id", "=", id)
    .executeTakeFirst();

/**
 * Claim one stream that has events due, for `claimMs`: one statement, so no transaction stays open
 * while the receiver is called. A process that dies mid-delivery lets its claim lapse and another
 * process (or itself, restarted) delivers the same events again: at least once.
 */
export const claimDueStream = async (db: Database, claimMs: number) => {
  const { rows } = await sql<{ id: string }>`
    update audit_log_streams set claimed_until = now() + ${`${claimMs} milliseconds`}::interval
    where id = (
      select s.id from audit_log_streams s
      where (s.claimed_until is null or s.claimed_until < now()) and s.next_attempt_at <= now()
        and exists (select 1 from audit_log_outbox o where o.stream_id = s.id)
      order by s.next_attempt_at
      limit 1
      for update skip locked)
    returning id`.execute(db);
  return rows[0]?.id;
};

/** The oldest undelivered events of a stream, in the order they were queued. */
export const pendingDeliveries = (db: Database, streamId: string, limit: number) =>
  db
    .selectFrom("audit_log_outbox as o")
    .leftJoin("audit_logs as l", "l.id", "o.event_id")
    .select([
      "o.id as outboxId",
      "o.event_id as eventId",
      "l.org_id",
      "l.project_id",
      "l.project_name",
      "l.chain_id",
      "l.seq",
      "l.actor_type",
      "l.actor_metadata",
      "l.event_type",
      "l.event_metadata",
      "l.ip_address",
      "l.user_agent",
      "l.user_agent_type",
      "l.created_at",
      "l.expires_at",
      "l.prev_hash",
      "l.hash",
    ])
    .where("o.stream_id", "=", streamId)
    .orderBy("o.id")
    .limit(limit)
    .execute();

export const deleteDelivered = (trx: Tx, streamId: string, outboxIds: string[]) =>
  trx.deleteFrom("audit_log_outbox").where("stream_id", "=", streamId).where("id", "in", outboxIds).execute();

export const markHealthy = (trx: Tx, streamId: string) =>
  trx
    .updateTable("audit_log_streams")
    .set({ attempts: 0, last_error: null, claimed_until: null })
    .where("id", "=", streamId)
    .execute();

export const markFailed = (db: Database, streamId: string, attempts: number, retryInMs: number, error: string) =>
  db
    .updateTable("audit_log_streams")
    .set({
      attempts,
      last_error: error.slice(0, 500),
      claimed_until: null,
      next_attempt_at: sql<Date>`now() + ${`${retryInMs} milliseconds`}::interval`,
    })
    .where("id", "=", streamId)
    .execute();

/** Let go of a claim without a delivery (nothing was pending any more). */
export const releaseClaim = (db: Database, streamId: string) =>
  db.updateTable("audit_log_streams").set({ claimed_until: null }).where("id", "=", streamId).execute();

export const extendClaim = (db: Database, streamId: string, claimMs: number) =>
  db
    .updateTable("audit_log_streams")
    .set({ claimed_until: sql<Date>`now() + ${`${claimMs} milliseconds`}::interval` })
    .where("id", "=", streamId)
    .execute();
