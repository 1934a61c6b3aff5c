import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { isUuid } from "../../db/errors";
import type { AuditCursor } from "./audit-cursor";

/** The identity a login named (by id, or by universal-auth client id), if it exists. */
export const findLoginSubject = async (db: Database, by: { identityId?: string; clientId?: string }) => {
  if (by.identityId && isUuid(by.identityId)) {
    const row = await db
      .selectFrom("identities")
      .select(["id", "name", "org_id as orgId"])
      .where("id", "=", by.identityId)
      .executeTakeFirst();
    if (row) return row;
  }
  if (by.clientId && isUuid(by.clientId)) {
    return db
      .selectFrom("identity_universal_auths as ua")
      .innerJoin("identity_auth_configs as c", "c.id", "ua.auth_config_id")
      .innerJoin("identities as i", "i.id", "c.identity_id")
      .select(["i.id", "i.name", "i.org_id as orgId"])
      .where("ua.client_id", "=", by.clientId)
      .executeTakeFirst();
  }
  return undefined;
};

export type AuditLogFilter = {
  orgId: string;
  projectId?: string;
  actorType?: string;
  actorId?: string;
  eventTypes?: string[];
  userAgentType?: string;
  environment?: string;
  secretPath?: string;
  secretKey?: string;
  /** Other `k=v` pairs, matched by containment against the event metadata. */
  metadata?: Record<string, string>;
  startDate: Date;
  endDate: Date;
  offset: number;
  limit: number;
  /** Only events before this one in the list's order (keyset paging). */
  cursor?: AuditCursor;
};

const LIST_COLUMNS = [
  "id",
  "org_id",
  "project_id",
  "project_name",
  "actor_type",
  "actor_metadata",
  "event_type",
  "event_metadata",
  "ip_address",
  "user_agent",
  "user_agent_type",
  "created_at",
  "expires_at",
] as const;

/**
 * A page of an organization's events, newest first, in (created_at, id) order; every filter is served
 * by an index that ends in (created_at desc, id desc), so a cursor page is a range scan of one page.
 */
export const listAuditLogs = (db: Database, filter: AuditLogFilter) => {
  let query = db
    .selectFrom("audit_logs")
    .select(LIST_COLUMNS)
    .select(sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as("cursor_at"))
    .where("org_id", "=", filter.orgId)
    .where("created_at", ">=", filter.startDate)
    .where("created_at", "<=", filter.endDate);
  if (filter.projectId) query = query.where("project_id", "=", filter.projectId);
  if (filter.actorType) query = query.where("actor_type", "=", filter.actorType);
  if (filter.actorId) query = query.where("actor_id", "=", filter.actorId);
  if (filter.eventTypes?.length) query = query.where("event_type", "in", filter.eventTypes);
  if (filter.userAgentType) query = query.where("user_agent_type", "=", filter.userAgentType);
  // Key and path have expression indexes of their own; the environment narrows what they found.
  if (filter.secretKey) query = query.where(sql<string>`event_metadata->>'secretKey'`, "=", filter.secretKey);
  if (filter.secretPath) query = query.where(sql<string>`event_metadata->>'secretPath'`, "=", filter.secretPath);
  if (filter.environment) query = query.where(sql<string>`event_metadata->>'environment'`, "=", filter.environment);
  if (filter.metadata && Object.keys(filter.metadata).length > 0) {
    query = query.where(sql<boolean>`event_metadata @> ${JSON.stringify(filter.metadata)}::jsonb`);
  }
  if (filter.cursor) {
    // Written as a bound on the index column plus a tie-break, which every index above can range-scan.
    const { id } = filter.cursor;
    const at = sql<Date>`${filter.cursor.createdAt}::timestamptz`;
    query = query.where("created_at", "<=", at).where((eb) => eb.or([eb("created_at", "<", at), eb("id", "<", id)]));
  }
  query = query.orderBy("created_at", "desc").orderBy("id", "desc");
  return (filter.offset > 0 ? query.offset(filter.offset) : query).limit(filter.limit).execute();
};

export type AuditLogRow = Awaited<ReturnType<typeof listAuditLogs>>[number];

/**
 * The chains with events in a time range, each with the first and last sequence number there: the
 * stretch of the chain to verify. Reads only the range's events, through the created_at indexes, and
 * only those above their chain's anchor (an event at or below it is pruned, if not yet deleted).
 */
export const chainStretchesInRange = (
  db: Database,
  range: { orgId: string; projectId?: string; startDate: Date; endDate: Date },
) => {
  let query = db
    .selectFrom("audit_logs as l")
    .innerJoin("audit_log_chains as c", "c.chain_id", "l.chain_id")
    .select(["l.chain_id", sql<string>`min(l.seq)::text`.as("first_seq"), sql<string>`max(l.seq)::text`.as("last_seq")])
    .where("l.org_id", "=", range.orgId)
    .where("l.created_at", ">=", range.startDate)
    .where("l.created_at", "<=", range.endDate)
    .whereRef("l.seq", ">", "c.pruned_seq");
  if (range.projectId) query = query.where("l.project_id", "=", range.projectId);
  return query.groupBy("l.chain_id").orderBy("l.chain_id").execute();
};

/** Up to `limit` events of a chain from sequence number `from` through `through`, in chain order. */
export const chainEventsBetween = (db: Database, chainId: string, from: string, through: string, limit: number) =>
  db
    .selectFrom("audit_logs")
    .selectAll()
    .where("chain_id", "=", chainId)
    .where("seq", ">=", from)
    .where("seq", "<=", through)
    .orderBy("seq")
    .limit(limit)
    .execute();

/** The stored hash of the event just before `seq` in a chain, or the chain's prune anchor. */
export const predecessorHash = async (db: Database, chainId: string, seq: string) => {
  const previous = await db
    .selectFrom("audit_logs")
    .select("hash")
    .where("chain_id", "=", chainId)
    .where("seq", "=", (BigInt(seq) - 1n).toString())
    .executeTakeFirst();
  if (previous) return previous.hash;
  const chain = await db
    .selectFrom("audit_log_chains")
    .select(["pruned_seq", "pruned_hash"])
    .where("chain_id", "=", chainId)
    .executeTakeFirst();
  return chain && BigInt(chain.pruned_seq) === BigInt(seq) - 1n ? chain.pruned_hash : undefined;
};

export const eventExists = async (db: Database, chainId: string, seq: bigint) =>
  (await db
    .selectFrom("audit_logs")
    .select("id")
    .where("chain_id", "=", chainId)
    .where("seq", "=", seq.toString())
    .executeTakeFirst()) !== undefined;

/** Every chain's head and prune anchor, by chain id. */
export const allChainBounds = (db: Database) =>
  db.selectFrom("audit_log_chains").select(["chain_id", "seq", "pruned_seq"]).orderBy("chain_id").execute();

/**
 * Events a whole-instance verification must account for: those above their chain's anchor, and any in
 * no chain. Events at or below an anchor are pruned already (the anchor moves before they are deleted,
 * see pruneAuditLogs) and are no longer part of the chain.
 */
export const countAuditEvents = async (db: Database) => {
  const { rows } = await sql<{ n: string }>`select count(*)::text as n from audit_logs l
    left join audit_log_chains c on c.chain_id = l.chain_id
    where c.chain_id is null or l.seq > c.pruned_seq`.execute(db);
  return Number(rows[0]!.n);
};

/** The last event a chain's head says exists. */
export const chainHead = (db: Database, chainId: string) =>
  db.selectFrom("audit_log_chains").select(["seq", "hash"]).where("chain_id", "=", chainId).executeTakeFirst();

export const setProjectRetentionDays = (db: Tx, projectId: string, days: number | null) =>
  db.updateTable("projects").set({ audit_logs_retention_days: days }).where("id", "=", projectId).execute();

/** Chains whose oldest remaining event expired before `now`, at most `limit`, with their anchor. */
export const chainsWithExpiredHead = (db: Database, now: Date, limit: number) =>
  db
    .selectFrom("audit_log_chains as c")
    .select(["c.chain_id", "c.pruned_seq"])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("audit_logs as l")
          .select("l.id")
          .whereRef("l.chain_id", "=", "c.chain_id")
          .where(sql<boolean>`l.seq = c.pruned_seq + 1`)
          .where("l.expires_at", "<", now),
      ),
    )
    .limit(limit)
    .execute();

/**
 * The first `limit` events of a chain after its anchor, oldest first, and whether each expired before
 * `now` (compared in the database, to the microsecond, as `chainsWithExpiredHead` compares).
 */
export const chainEventsAfter = (db: Database, chainId: string, afterSeq: string, now: Date, limit: number) =>
  db
    .selectFrom("audit_logs")
    .select(["seq", "hash", sql<boolean>`coalesce(expires_at < ${now}, false)`.as("expired")])
    .where("chain_id", "=", chainId)
    .where("seq", ">", afterSeq)
    .orderBy("seq")
    .limit(limit)
    .execute();

/**
 * Anchors a chain on an event (its sequence and hash), unless the anchor is already at or past it: a
 * statement of its own, so the chain's head row is locked only for this one-row update and its commit.
 */
export const anchorChain = (db: Database, chainId: string, last: { seq: string; hash: string }) =>
  db
    .updateTable("audit_log_chains")
    .set({ pruned_seq: last.seq, pruned_hash: last.hash })
    .where("chain_id", "=", chainId)
    .where("pruned_seq", "<", last.seq)
    .execute();

/** Deletes a chain's events after `afterSeq` up to `lastSeq` (a bounded run the caller anchored past). */
export const deleteChainRun = async (db: Database, chainId: string, afterSeq: string, lastSeq: string) => {
  const removed = await db
    .deleteFrom("audit_logs")
    .where("chain_id", "=", chainId)
    .where("seq", ">", afterSeq)
    .where("seq", "<=", lastSeq)
    .executeTakeFirst();
  return Number(removed.numDeletedRows);
};

/**
 * Deletes events left at or below their chain's anchor (a pruner stopped between anchoring and
 * deleting), at most `limit`; returns how many. Each chain is probed through its (chain_id, seq) key,
 * so a pass that finds nothing left costs one index probe per chain, never a scan of the events.
 */
export const deleteBelowAnchors = async (db: Database, limit: number) => {
  const { numAffectedRows } = await sql`delete from audit_logs where id in (
      select l.id from audit_log_chains c
      cross join lateral (select id from audit_logs
        where chain_id = c.chain_id and seq <= c.pruned_seq order by seq limit ${limit}) l
      limit ${limit})`.execute(db);
  return Number(numAffectedRows ?? 0n);
};
