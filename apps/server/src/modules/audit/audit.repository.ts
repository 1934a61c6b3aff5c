import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { isUuid } from "../../db/errors";

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

/** A page of an organization's events, newest first; every filter is served by an index. */
export const listAuditLogs = (db: Database, filter: AuditLogFilter) => {
  let query = db
    .selectFrom("audit_logs")
    .select(LIST_COLUMNS)
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
  return query.orderBy("created_at", "desc").orderBy("id", "desc").offset(filter.offset).limit(filter.limit).execute();
};

export type AuditLogRow = Awaited<ReturnType<typeof listAuditLogs>>[number];

/** Events of the chains touching a time range, in chain order, for verification. */
export const chainEventsInRange = (
  db: Database,
  range: { orgId: string; projectId?: string; startDate: Date; endDate: Date; afterChain?: string; afterSeq?: string },
  limit: number,
) => {
  let query = db
    .selectFrom("audit_logs")
    .selectAll()
    .where("org_id", "=", range.orgId)
    .where("created_at", ">=", range.startDate)
    .where("created_at", "<=", range.endDate);
  if (range.projectId) query = query.where("project_id", "=", range.projectId);
  if (range.afterChain !== undefined && range.afterSeq !== undefined) {
    const { afterChain, afterSeq } = range;
    query = query.where((eb) =>
      eb.or([eb("chain_id", ">", afterChain), eb.and([eb("chain_id", "=", afterChain), eb("seq", ">", afterSeq)])]),
    );
  }
  return query.orderBy("chain_id").orderBy("seq").limit(limit).execute();
};

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

/** The last event a chain's head says exists. */
export const chainHead = (db: Database, chainId: string) =>
  db.selectFrom("audit_log_chains").select(["seq", "hash"]).where("chain_id", "=", chainId).executeTakeFirst();

export const setProjectRetentionDays = (db: Tx, projectId: string, days: number | null) =>
  db.updateTable("projects").set({ audit_logs_retention_days: days }).where("id", "=", projectId).execute();

/** Chains whose oldest remaining event expired before `now`, at most `limit`. */
export const chainsWithExpiredHead = (db: Database, now: Date, limit: number) =>
  db
    .selectFrom("audit_log_chains as c")
    .select("c.chain_id")
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

export const lockChain = (trx: Tx, chainId: string) =>
  trx.selectFrom("audit_log_chains").select("chain_id").where("chain_id", "=", chainId).forUpdate().execute();

/** The first `limit` events of a chain, oldest first. */
export const chainHeadEvents = (trx: Tx, chainId: string, limit: number) =>
  trx
    .selectFrom("audit_logs")
    .select(["seq", "hash", "expires_at"])
    .where("chain_id", "=", chainId)
    .orderBy("seq")
    .limit(limit)
    .execute();

/** Deletes a chain's events up to `seq` and anchors the chain on the last one deleted: how many went. */
export const pruneChainThrough = async (trx: Tx, chainId: string, last: { seq: string; hash: string }) => {
  const removed = await trx
    .deleteFrom("audit_logs")
    .where("chain_id", "=", chainId)
    .where("seq", "<=", last.seq)
    .executeTakeFirst();
  await trx
    .updateTable("audit_log_chains")
    .set({ pruned_seq: last.seq, pruned_hash: last.hash })
    .where("chain_id", "=", chainId)
    .execute();
  return Number(removed.numDeletedRows);
};
