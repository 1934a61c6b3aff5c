import type { AppDeps, AppJob } from "../../context";
import { inTransaction, type Tx } from "../../db/transaction";
import { loop } from "../../lib/loop";
import { chainHeadEvents, chainsWithExpiredHead, lockChain, pruneChainThrough } from "./audit.repository";

const RUN = 5_000;
const CHAINS_PER_PASS = 100;

/**
 * Remove the expired prefix of one chain, at most RUN events, and move its anchor to the last
 * removed event: what remains still verifies from the anchor. An event that expires before an
 * older one (a shortened retention) waits for the older one: pruning never opens a gap.
 */
const pruneChain = async (trx: Tx, chainId: string, now: Date) => {
  await lockChain(trx, chainId);
  const head = await chainHeadEvents(trx, chainId, RUN);
  let last: { seq: string; hash: string } | undefined;
  for (const row of head) {
    if (!row.expires_at || row.expires_at >= now) break;
    last = { seq: String(row.seq), hash: row.hash };
  }
  if (!last) return 0;
  return pruneChainThrough(trx, chainId, last);
};

/** One pruning pass over every chain with expired events; returns how many events were removed. */
export const pruneAuditLogs = async (deps: AppDeps) => {
  const now = new Date(deps.clock.now());
  let total = 0;
  for (;;) {
    const chains = await chainsWithExpiredHead(deps.db, now, CHAINS_PER_PASS);
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
