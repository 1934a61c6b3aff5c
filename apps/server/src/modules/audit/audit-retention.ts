import { sql } from "kysely";
import type { AppDeps, AppJob } from "../../context";
import { inTransaction, type Tx } from "../../db/transaction";
import type { Database } from "../../db/database";
import { loop } from "../../lib/loop";

const RUN = 5_000;
const CHAINS_PER_PASS = 100;

/** Chains whose oldest remaining event has expired. */
const chainsToPrune = (db: Database, now: Date) =>
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
    .limit(CHAINS_PER_PASS)
    .execute();

/**
 * Remove the expired prefix of one chain, at most RUN events, and move its anchor to the last
 * removed event: what remains still verifies from the anchor. An event that expires before an
 * older one (a shortened retention) waits for the older one: pruning never opens a gap.
 */
const pruneChain = async (trx: Tx, chainId: string, now: Date) => {
  await trx.selectFrom("audit_log_chains").select("chain_id").where("chain_id", "=", chainId).forUpdate().execute();
  const head = await trx
    .selectFrom("audit_logs")
    .select(["seq", "hash", "expires_at"])
    .where("chain_id", "=", chainId)
    .orderBy("seq")
    .limit(RUN)
    .execute();
  let last: { seq: string; hash: string } | undefined;
  for (const row of head) {
    if (!row.expires_at || row.expires_at >= now) break;
    last = { seq: String(row.seq), hash: row.hash };
  }
  if (!last) return 0;
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

/** One pruning pass over every chain with expired events; returns how many events were removed. */
export const pruneAuditLogs = async (deps: AppDeps) => {
  const now = new Date(deps.clock.now());
  let total = 0;
  for (;;) {
    const chains = await chainsToPrune(deps.db, now);
    if (chains.length === 0) return total;
    for (const { chain_id } of chains) {
      total += await inTransaction(deps.db, (trx) => pruneChain(trx, chain_id, now));
    }
  }
};

/** Removes expired audit events (AUDIT_LOG_RETENTION_DAYS, or a project's shorter retention) hourly. */
export const auditRetentionJob: AppJob = {
  name: "audit-retention",
  start: (deps) =>
    loop(
      3_600_000,
      () => pruneAuditLogs(deps),
      (error) => deps.logger.error({ err: error }, "audit log pruning failed"),
    ),
};
