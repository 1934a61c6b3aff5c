import { sql, type Insertable, type Selectable, type Updateable } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { SecretSyncsTable } from "../../db/tables/secret-syncs";

export type SyncRow = Selectable<SecretSyncsTable> & {
  org_id: string;
  connection_name: string;
  connection_app: string;
  env_slug: string;
  env_name: string;
};

const withJoins = (db: Database) =>
  db
    .selectFrom("secret_syncs as s")
    .innerJoin("app_connections as c", "c.id", "s.connection_id")
    .innerJoin("environments as e", "e.id", "s.env_id")
    .innerJoin("projects as p", "p.id", "s.project_id")
    .selectAll("s")
    .select([
      "p.org_id as org_id",
      "c.name as connection_name",
      "c.app as connection_app",
      "e.slug as env_slug",
      "e.name as env_name",
    ]);

export const findSync = (db: Database, id: string) =>
  withJoins(db).where("s.id", "=", id).executeTakeFirst() as Promise<SyncRow | undefined>;

export const findSyncByName = (db: Database, projectId: string, name: string) =>
  withJoins(db).where("s.project_id", "=", projectId).where("s.name", "=", name).executeTakeFirst() as Promise<
    SyncRow | undefined
  >;

export const listProjectSyncs = (db: Database, projectId: string, destination?: string) => {
  let query = withJoins(db).where("s.project_id", "=", projectId);
  if (destination) query = query.where("s.destination", "=", destination);
  return query.orderBy("s.created_at").orderBy("s.id").execute() as Promise<SyncRow[]>;
};

/**
 * One sync of the organization with this destination kind and these settings (jsonb equality: key order
 * does not matter), at `ref` when it is known, other than `excludeId`; the oldest first.
 */
export const findSyncAtDestination = (
  db: Database,
  at: { orgId: string; destination: string; config: Record<string, unknown>; ref?: string; excludeId?: string },
) => {
  let query = db
    .selectFrom("secret_syncs as s")
    .innerJoin("projects as p", "p.id", "s.project_id")
    .select(["s.id", "s.project_id"])
    .where("p.org_id", "=", at.orgId)
    .where("s.destination", "=", at.destination)
    .where(sql<boolean>`s.destination_config = ${JSON.stringify(at.config)}::jsonb`);
  if (at.ref !== undefined) query = query.where("s.destination_ref", "=", at.ref);
  if (at.excludeId !== undefined) query = query.where("s.id", "<>", at.excludeId);
  return query.orderBy("s.created_at").orderBy("s.id").limit(1).executeTakeFirst();
};

export const insertSync = (trx: Tx, row: Insertable<SecretSyncsTable>) =>
  trx.insertInto("secret_syncs").values(row).execute();

export const updateSync = (trx: Tx | Database, id: string, values: Updateable<SecretSyncsTable>) =>
  trx
    .updateTable("secret_syncs")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .execute();

/** The sync's row, locked for the rest of the transaction. */
export const lockSync = (trx: Tx, id: string) =>
  trx.selectFrom("secret_syncs").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();

export const deleteSyncRow = (trx: Tx, id: string) => trx.deleteFrom("secret_syncs").where("id", "=", id).execute();

/** Syncs due now and not held by a live run, locked with SKIP LOCKED so concurrent passes split them. */
export const findDueSyncs = (trx: Tx, now: Date, limit: number) =>
  trx
    .selectFrom("secret_syncs")
    .select(["id", "connection_id"])
    .where("due_at", "<=", now)
    .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<", now)]))
    .orderBy("due_at")
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();

/** How many runs of a connection's syncs hold a live claim (the per-connection cap). */
export const countConnectionRuns = async (trx: Tx, connectionId: string, now: Date) =>
  Number(
    (
      await trx
        .selectFrom("secret_syncs")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("connection_id", "=", connectionId)
        .where("claimed_until", ">", now)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Auto syncs of a project that have not considered every event up to `head`. */
export const listSyncsBehind = (db: Database, projectId: string, head: number) =>
  db
    .selectFrom("secret_syncs")
    .select(["id", "folder_id", "env_id", "event_cursor", "referenced_places"])
    .where("project_id", "=", projectId)
    .where("is_auto_sync_enabled", "=", true)
    .where("event_cursor", "<", String(head))
    .execute();

/** Projects whose auto syncs are behind their event head (a pass after missed notices). */
export const listProjectsBehind = (db: Database, limit: number) =>
  db
    .selectFrom("secret_syncs as s")
    .innerJoin("project_event_heads as h", "h.project_id", "s.project_id")
    .select("s.project_id")
    .where("s.is_auto_sync_enabled", "=", true)
    .whereRef("s.event_cursor", "<", "h.last_seq")
    .groupBy("s.project_id")
    .limit(limit)
    .execute();

/**
 * Moves a sync's cursor to `head` (never back), making it due by `dueAt` when `dirty`; a sync that is
 * already due keeps its earlier time.
 */
export const advanceCursor = (db: Database, id: string, head: number, dirty: boolean, dueAt: Date) =>
  db
    .updateTable("secret_syncs")
    .set({
      event_cursor: String(head),
      ...(dirty ? { due_at: sql<Date>`least(coalesce(due_at, ${dueAt}), ${dueAt})` } : {}),
    })
    .where("id", "=", id)
    .where("event_cursor", "<", String(head))
    .execute();

/** Auto syncs last pushed before `cutoff` become due: a run compares the destination again (drift). */
export const markStaleSyncs = (db: Database, cutoff: Date, now: Date) =>
  db
    .updateTable("secret_syncs")
    .set({ due_at: now, verify_next: true })
    .where("is_auto_sync_enabled", "=", true)
    .where("due_at", "is", null)
    .where("sync_status", "=", "succeeded")
    .where("last_synced_at", "<", cutoff)
    .execute();

// Ownership of destination names.

/** Names confirmed per statement. */
const CONFIRM_BATCH = 500;

export const listOwnedKeys = (db: Database | Tx, syncId: string) =>
  db.selectFrom("secret_sync_keys").select(["destination_key", "value_hmac"]).where("sync_id", "=", syncId).execute();

/** Of `names` at `ref`, those another sync owns. */
export const listOwnedElsewhere = async (db: Database, ref: string, syncId: string, names: readonly string[]) =>
  names.length === 0
    ? []
    : (
        await db
          .selectFrom("secret_sync_keys")
          .select("destination_key")
          .where("destination_ref", "=", ref)
          .where("sync_id", "<>", syncId)
          .where("destination_key", "in", names)
          .execute()
      ).map((r) => r.destination_key);

/**
 * Claims names for a sync before they are written (unconfirmed: no HMAC). A name another sync owns
 * is not claimed: the answer lists the names that are now this sync's.
 */
export const claimKeys = async (trx: Tx, syncId: string, ref: string, names: readonly string[]) => {
  if (names.length === 0) return [];
  await trx
    .insertInto("secret_sync_keys")
    .values(names.map((name) => ({ sync_id: syncId, destination_ref: ref, destination_key: name, value_hmac: null })))
    .onConflict((oc) => oc.doNothing())
    .execute();
  const mine = await trx
    .selectFrom("secret_sync_keys")
    .select("destination_key")
    .where("sync_id", "=", syncId)
    .where("destination_key", "in", names)
    .execute();
  return mine.map((r) => r.destination_key);
};

/** Records what was written: each name's value HMAC and when. */
export const confirmKeys = async (
  trx: Tx,
  syncId: string,
  written: readonly { name: string; hmac: string }[],
  at: Date,
) => {
  for (let i = 0; i < written.length; i += CONFIRM_BATCH) {
    const rows = written.slice(i, i + CONFIRM_BATCH).map((w) => sql`(${w.name}, ${w.hmac})`);
    await sql`update secret_sync_keys k set value_hmac = v.hmac, written_at = ${at}
      from (values ${sql.join(rows)}) as v(name, hmac)
      where k.sync_id = ${syncId} and k.destination_key = v.name`.execute(trx);
  }
};

export const releaseKeys = (trx: Tx, syncId: string, names: readonly string[]) =>
  names.length === 0
    ? Promise.resolve()
    : trx
        .deleteFrom("secret_sync_keys")
        .where("sync_id", "=", syncId)
        .where("destination_key", "in", names)
        .execute()
        .then(() => undefined);

/** A sync's records move to another place (its destination changed): the old place's names are let go. */
export const releaseAllKeys = (trx: Tx, syncId: string) =>
  trx.deleteFrom("secret_sync_keys").where("sync_id", "=", syncId).execute();
